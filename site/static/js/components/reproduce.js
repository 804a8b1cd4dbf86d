// The reproduce panel's text: a check's promtool test file or amtool command, built from its probe.
//
// Strings are written as JSON strings, which YAML reads as double-quoted scalars, so no value from
// the catalog can change the structure of the file.

const SAFE_WORD = /^[A-Za-z0-9_.:/@%+=,-]+$/;

/** A shell word: the text itself when it is plain, else single-quoted. */
export function shellWord(text) {
  const value = String(text);
  return SAFE_WORD.test(value) ? value : `'${value.replaceAll("'", "'\\''")}'`;
}

function yamlScalar(value) {
  if (typeof value === "number" && Number.isFinite(value)) return String(value);
  if (typeof value === "boolean") return value ? "true" : "false";
  return JSON.stringify(String(value));
}

function labelArgs(labels) {
  return Object.keys(labels)
    .sort()
    .map((name) => shellWord(`${name}=${labels[name]}`))
    .join(" ");
}

function promtoolTest(check, inputs) {
  const probe = check.probe;
  const interval = inputs.evaluation_interval || "1m";
  const series = (inputs.input_series || {})[probe.scenario] || [];
  const lines = [
    `# ${check.id}: ${check.label || ""}`.replace(/\n/g, " "),
    "# Save as reproduce.yml in the monitoring repo, then run: promtool test rules reproduce.yml",
    "# (if recording rules and this alert live in different groups, add group_eval_order)",
    "rule_files:",
    "  - rules/*.yml",
    `evaluation_interval: ${yamlScalar(interval)}`,
    "tests:",
    `  - interval: ${yamlScalar(interval)}`,
    "    input_series:",
  ];
  for (const entry of series) {
    lines.push(`      - series: ${yamlScalar(entry.series)}`, `        values: ${yamlScalar(entry.values)}`);
  }
  if (series.length === 0) lines.push("      []");
  lines.push("    promql_expr_test:", `      - expr: ${yamlScalar(probe.expr)}`, `        eval_time: ${yamlScalar(probe.eval_time)}`);
  const samples = probe.exp_samples || [];
  if (samples.length === 0) {
    lines.push("        exp_samples: []");
  } else {
    lines.push("        exp_samples:");
    for (const sample of samples) {
      lines.push(`          - labels: ${yamlScalar(sample.labels ?? "{}")}`, `            value: ${yamlScalar(sample.value)}`);
    }
  }
  return lines.join("\n") + "\n";
}

function routeCommand(check) {
  const probe = check.probe;
  const lines = [`# ${check.id}: ${check.label || ""}`.replace(/\n/g, " ")];
  if (probe.expect) lines.push(`# expect exactly these receivers: ${probe.expect.join(", ")}`);
  if (probe.forbid) lines.push(`# expect none of these receivers: ${probe.forbid.join(", ")}`);
  lines.push(`amtool config routes test --config.file=alertmanager/alertmanager.yml ${labelArgs(probe.labels || {})}`);
  return lines.join("\n") + "\n";
}

function inhibitCommands(check) {
  const probe = check.probe;
  const alerts = probe.alerts || [];
  const target = alerts[probe.target] || {};
  const url = "--alertmanager.url=http://127.0.0.1:9093";
  const lines = [
    `# ${check.id}: ${check.label || ""}`.replace(/\n/g, " "),
    "# amtool does not simulate inhibition: run Alertmanager on the workspace's config and post the alerts.",
    "alertmanager --config.file=alertmanager/alertmanager.yml --storage.path=\"$(mktemp -d)\" &",
    ...alerts.map((alert) => `amtool ${url} alert add ${labelArgs(alert)}`),
    `# expect ${target.alertname || "the target"} ${probe.expect_muted ? "muted (listed)" : "not muted (not listed)"} here:`,
    `amtool ${url} alert query --inhibited`,
  ];
  return lines.join("\n") + "\n";
}

function syntaxCommand(check) {
  return check.probe.what === "alertmanager"
    ? "amtool check-config alertmanager/alertmanager.yml\n"
    : "promtool check rules rules/*.yml\n";
}

/** Whether the reproduce text of check needs the task's input series (a promtool test file). */
export function needsInputSeries(check) {
  const probe = check.probe;
  return Boolean(probe && typeof probe === "object" && probe.type === "promql" && probe.expr);
}

/**
 * {kind: "promtool" | "amtool" | "shell" | "none", text} for check (with check.probe from the task
 * file); `inputs` is the task's data/task-inputs file ({evaluation_interval, input_series}), which
 * only a promtool test file reads (needsInputSeries). "none" when the grader checks it in Python
 * (preservation, tamper, rule counts) or there is no probe.
 */
export function reproduceText(check, inputs) {
  const probe = check.probe;
  if (!probe || typeof probe !== "object") return { kind: "none", text: "No probe in this task's catalog: nothing to reproduce by hand.\n" };
  if (needsInputSeries(check)) return { kind: "promtool", text: promtoolTest(check, inputs) };
  if (probe.type === "route" && probe.labels) return { kind: "amtool", text: routeCommand(check) };
  if (probe.type === "inhibit" && Array.isArray(probe.alerts)) return { kind: "amtool", text: inhibitCommands(check) };
  if (probe.type === "syntax") return { kind: "shell", text: syntaxCommand(check) };
  return { kind: "none", text: `# The grader checks this itself (no promtool or amtool command). Its probe:\n${JSON.stringify(probe, null, 2)}\n` };
}
