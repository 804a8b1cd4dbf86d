// The site's data files as JSDoc types, written by scripts/site_types.py from
// docs/schemas/site-*.schema.json (contract/site.py): do not edit by hand.
// A script, not a module: its typedefs are global to the type check (tsc -p site), and
// no page loads it (the bundler only follows real imports).

/**
 * Per task and agent/model with several attempts: pass@k for k in 1..attempts (the unbiased estimator) and the mean reward with its 95% t interval (exporter.attempts).
 * @typedef {Object} AttemptRow
 * @property {string} agent
 * @property {number} attempts
 * @property {(number|null)} ci_high
 * @property {(number|null)} ci_low
 * @property {number} mean_reward
 * @property {(string|null)} model
 * @property {Object<string, number>} pass_at
 * @property {number} solved
 * @property {string} task_id
 */

/**
 * ``data/attempts.json``: the attempt rows past the home page's preview, ``pass_at`` holding only the k the page shows (exporter.site_data.attempts_document).
 * @typedef {Object} AttemptsDocument
 * @property {Array<AttemptRow>} attempts
 * @property {number} version
 */

/**
 * ``data/home.json``: what the home page loads first.
 * @typedef {Object} HomeDocument
 * @property {Object<string, Array<Array<*>>>} facets
 * @property {Array<string>} fields
 * @property {number} runs_total
 * @property {number} search_shards
 * @property {Array<Object<string, *>>} shards
 * @property {number} version
 */

/**
 * One Harbor job of the imported trials (exporter/harbor_jobs.py ``job_rows``): trials, the trials with a verifier reward and their mean (None when none has one), the same for rewards re-graded here, errors by exception type, token and cost totals.
 * @typedef {Object} JobRow
 * @property {number} completion_tokens
 * @property {number} cost_usd
 * @property {Object<string, number>} error_types
 * @property {number} errors
 * @property {string} job
 * @property {(number|null)} mean_regrade
 * @property {(number|null)} mean_reward
 * @property {number} prompt_tokens
 * @property {number} regraded
 * @property {number} rewarded
 * @property {number} trials
 */

/**
 * Per run kind and policy: runs counted, mean reward and solved rate (6 decimals), the mean's 95% t interval and pass@k averaged over the policy's tasks with several attempts (exporter.attempts).
 * @typedef {Object} LeaderboardRow
 * @property {(number|null)} [ci_high]
 * @property {(number|null)} [ci_low]
 * @property {string} [kind]
 * @property {number} mean_reward
 * @property {number} [no_reward]
 * @property {Object<string, number>} [pass_at]
 * @property {string} policy
 * @property {number} runs
 * @property {number} solved_rate
 */

/**
 * One ``index.json`` ``runs[]`` row (and, as arrays in ``fields`` order, a shard row).
 * @typedef {Object} RunRow
 * @property {(string|null)} [agent]
 * @property {(string|null)} [incident]
 * @property {("alerting"|"episode")} kind
 * @property {(string|null)} model
 * @property {(string|null)} policy
 * @property {(number|null)} reward
 * @property {string} run_id
 * @property {boolean} solved
 * @property {("running"|"complete"|"failed")} status
 * @property {number} steps
 * @property {string} task_id
 * @property {(string|number|null)} tier
 * @property {(string|null)} workflow
 */

/**
 * One ``index.json`` ``tasks[]`` row.
 * @typedef {Object} TaskRow
 * @property {string} id
 * @property {number} runs
 * @property {(string|number|null)} tier
 * @property {string} title
 * @property {(string|null)} workflow
 */

/**
 * ``data/index.json``: every run row, the tasks, and two leaderboards (complete runs only, and every run). A site whose run rows would take the file past the 10 MB a file may have (about 29,000 runs) has ``run_shards`` instead of ``runs``: the rows are then those of ``data/runs-index/0.json`` .. ``<run_shards - 1>.json`` (arrays in their ``fields`` order), in the same order.
 * @typedef {Object} SiteIndex
 * @property {Array<AttemptRow>} [attempts]
 * @property {string} generated_by
 * @property {number} incomplete_runs
 * @property {Array<JobRow>} [jobs]
 * @property {Array<LeaderboardRow>} leaderboard
 * @property {Array<LeaderboardRow>} leaderboard_all
 * @property {(number|null)} [run_shards]
 * @property {(Array<RunRow>|null)} [runs]
 * @property {Array<TaskRow>} tasks
 * @property {number} version
 */

/**
 * A run head's ``episode`` block (episode runs only, exporter.episodes.episode_head): what the episode board shows at the first steps that only a later step knows.
 * @typedef {Object} EpisodeHead
 * @property {(number|null)} done_step
 * @property {(string|null)} resolution
 */

/**
 * What the checks panel's row shows of a check, and its catalog index.
 * @typedef {Object} HeadCheck
 * @property {string} family
 * @property {string} id
 * @property {number} index
 * @property {string} label
 * @property {(string|null)} req
 */

/**
 * What a run head carries of its task file: the header's title and instruction, the number of checks and the first panel groups (exporter.site_data.head_task).
 * @typedef {Object} HeadTask
 * @property {number} check_count
 * @property {Array<HeadCheck>} checks
 * @property {string} instruction
 * @property {Array<PanelGroup>} panel
 * @property {Array<Object<string, *>>} requirements
 * @property {string} title
 */

/**
 * One group of the checks panel, in the order the viewer draws them (exporter.site_data.panel_groups: catalog order grouped by requirement).
 * @typedef {Object} PanelGroup
 * @property {Array<number>} checks
 * @property {(string|null)} req
 */

/**
 * One step of a run file: ``n`` = ATIF ``step_id`` - 1.
 * @typedef {Object} SiteStep
 * @property {Object<string, (number|null)>} [blame]
 * @property {Object<string, *>} [causes]
 * @property {Array<number>} changed
 * @property {string} checks
 * @property {(Object<string, Array<Object<string, *>>>|null)} [config]
 * @property {(boolean|null)} [copied]
 * @property {(Object<string, *>|null)} diff
 * @property {(Object<string, *>|null)} [env]
 * @property {Object<string, string>} failed
 * @property {boolean} graded
 * @property {(Object<string, *>|null)} [lazy]
 * @property {(Object<string, *>|null)} [llm]
 * @property {(Array<Object<string, *>>|null)} [media]
 * @property {string} message
 * @property {number} n
 * @property {(Array<Object<string, *>>|null)} [orphans]
 * @property {(string|null)} output
 * @property {number} reward
 * @property {(string|null)} [section]
 * @property {string} source
 * @property {number} step_id
 * @property {(Array<string>|null)} [subagents]
 * @property {(Object<string, *>|null)} tool
 * @property {number} total
 */

/**
 * ``data/run-heads/<run-id>.json``: the run file's fields but ``steps``, the step count, the last total, what the first paint shows of the task (``task``) and the first steps as in the run file, their ``failed``, ``causes`` and ``blame`` cut to the head's checks.
 * @typedef {Object} RunHead
 * @property {(string|null)} [catalog_version]
 * @property {(EpisodeHead|null)} [episode]
 * @property {(string|null)} error
 * @property {(Object<string, *>|null)} final
 * @property {(Object<string, *>|null)} [harbor]
 * @property {("alerting"|"episode")} kind
 * @property {(number|null)} last_total
 * @property {(Object<string, *>|null)} [llm]
 * @property {(string|null)} model
 * @property {(string|null)} policy
 * @property {string} run_id
 * @property {(number|null)} seed
 * @property {("running"|"complete"|"failed")} status
 * @property {number} step_count
 * @property {Array<SiteStep>} steps
 * @property {(Array<Object<string, *>>|null)} [subagents]
 * @property {HeadTask} task
 * @property {string} task_id
 * @property {(Object<string, string>|null)} [tools]
 */

/**
 * ``data/runs/<run-id>.json``.
 * @typedef {Object} RunDocument
 * @property {(string|null)} [catalog_version]
 * @property {(string|null)} error
 * @property {(Object<string, *>|null)} final
 * @property {(Object<string, *>|null)} [harbor]
 * @property {("alerting"|"episode")} kind
 * @property {(Object<string, *>|null)} [llm]
 * @property {(string|null)} model
 * @property {(string|null)} policy
 * @property {string} run_id
 * @property {(number|null)} seed
 * @property {("running"|"complete"|"failed")} status
 * @property {Array<SiteStep>} steps
 * @property {(Array<Object<string, *>>|null)} [subagents]
 * @property {string} task_id
 * @property {(Object<string, string>|null)} [tools]
 */

/**
 * ``data/task-inputs/<task-id>.json``: the scenario data only the check inspector's scenario plot and reproduce panel read (loaded when a check is opened).
 * @typedef {Object} TaskInputs
 * @property {(string|null)} evaluation_interval
 * @property {Object<string, *>} [input_series]
 * @property {Object<string, *>} [scenario_plots]
 * @property {string} task_id
 */

/**
 * One run of a task for the compare pickers.
 * @typedef {Object} TaskRunRow
 * @property {(string|null)} model
 * @property {(string|null)} policy
 * @property {(number|null)} reward
 * @property {string} run_id
 * @property {boolean} solved
 * @property {("running"|"complete"|"failed")} status
 * @property {number} steps
 */

/**
 * ``data/task-runs/<task-id>.json``.
 * @typedef {Object} TaskRuns
 * @property {Array<TaskRunRow>} runs
 * @property {string} task_id
 */

/**
 * A check in a task file: the catalog fields, its ``probe`` and scenario ``plot``.
 * @typedef {Object} TaskCheck
 * @property {string} family
 * @property {string} id
 * @property {string} label
 * @property {(string|null)} note
 * @property {(Object<string, *>|null)} plot
 * @property {(Object<string, *>|null)} probe
 * @property {(string|null)} req
 */

/**
 * ``data/tasks/<task-id>.json``: the check catalog every run of the task shares.
 * @typedef {Object} TaskDocument
 * @property {Array<TaskCheck>} checks
 * @property {string} id
 * @property {string} instruction
 * @property {Array<PanelGroup>} panel
 * @property {Array<Object<string, *>>} requirements
 * @property {(string|number|null)} tier
 * @property {string} title
 * @property {(string|null)} workflow
 */
