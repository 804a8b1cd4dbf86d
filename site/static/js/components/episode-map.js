// The service dependency map of an episode run's board (#episode-map-svg in #episode-map-body):
// services in columns by call depth, arrows from caller to callee, coloured by status, the
// service acted on at this step marked.
//
// Every string from a run goes in as text (lib/dom.js), never as HTML.

import { byId, fill, svg } from "../lib/dom.js";
import { isObject, list, serviceRows } from "../lib/episode-data.js";
import { refillOnChange, setAttr, setHidden, setText } from "../lib/dom-update.js";

const NODE_W = 168;
const NODE_H = 34;
const GAP_X = 70;
const GAP_Y = 16;

function callGraph(dependencies) {
  const calls = new Map();
  const order = [];
  const add = (name) => {
    if (!calls.has(name)) {
      calls.set(name, []);
      order.push(name);
    }
  };
  for (const entry of dependencies) {
    add(entry.service);
    for (const callee of list(entry.calls)) {
      if (typeof callee !== "string") continue;
      add(callee);
      if (!calls.get(entry.service).includes(callee)) calls.get(entry.service).push(callee);
    }
  }
  return { calls, order };
}

/** Services in columns by call depth (callers left of callees): {calls: Map, columns: [[name]]}. */
export function mapLayout(dependencies) {
  const { calls, order } = callGraph(dependencies);
  const depth = new Map(order.map((name) => [name, 0]));
  for (let round = 0; round < order.length; round += 1) {
    let moved = false;
    for (const [caller, callees] of calls) {
      for (const callee of callees) {
        if (depth.get(callee) < depth.get(caller) + 1 && depth.get(caller) + 1 < order.length) {
          depth.set(callee, depth.get(caller) + 1);
          moved = true;
        }
      }
    }
    if (!moved) break;
  }
  const columns = [];
  for (const name of order) {
    const d = depth.get(name);
    (columns[d] ||= []).push(name);
  }
  return { calls, columns: columns.filter(Boolean) };
}

function positions(columns) {
  const tallest = Math.max(...columns.map((column) => column.length));
  const width = columns.length * NODE_W + (columns.length - 1) * GAP_X + 20;
  const height = tallest * NODE_H + (tallest - 1) * GAP_Y + 36;
  const position = new Map();
  columns.forEach((column, c) => {
    const offset = ((tallest - column.length) * (NODE_H + GAP_Y)) / 2;
    column.forEach((name, r) => position.set(name, { x: 10 + c * (NODE_W + GAP_X), y: 26 + offset + r * (NODE_H + GAP_Y) }));
  });
  return { width, height, position };
}

function edge(caller, callee, from, to) {
  const x1 = from.x + NODE_W;
  const y1 = from.y + NODE_H / 2;
  const x2 = to.x;
  const y2 = to.y + NODE_H / 2;
  const bend = Math.max(24, (x2 - x1) / 2);
  const d = x2 > x1 ? `M ${x1} ${y1} C ${x1 + bend} ${y1}, ${x2 - bend} ${y2}, ${x2} ${y2}` : `M ${from.x + NODE_W / 2} ${from.y + NODE_H} Q ${(from.x + to.x) / 2 + NODE_W} ${(y1 + y2) / 2}, ${to.x + NODE_W / 2} ${to.y}`;
  return svg("path", { class: "map-edge", d, "marker-end": "url(#map-arrow)", dataset: { from: caller, to: callee } });
}

function nodeParts(group, name, { x, y }, state, actedOn) {
  const label = name.length > 22 ? `${name.slice(0, 21)}\u2026` : name;
  fill(group,
    svg("title", null, `${name}: ${state}${actedOn ? " (acted on at this step)" : ""}`),
    svg("rect", { x, y, width: NODE_W, height: NODE_H, rx: 7 }),
    svg("text", { x: x + NODE_W / 2, y: y + NODE_H / 2 + 4, "text-anchor": "middle" }, label),
    actedOn ? svg("text", { class: "map-acted", x: x + NODE_W / 2, y: y - 6, "text-anchor": "middle" }, "\u25bc acted on") : null);
}

/** Set a service's node to its status and whether it was acted on (its parts redrawn only when they change). */
function applyNode(group, name, at, state, actedOn) {
  setAttr(group, "class", ["map-node", `status-${state}`, actedOn ? "acted-on" : null].filter(Boolean).join(" "));
  setAttr(group, "data-status", state);
  setAttr(group, "data-acted-on", actedOn ? "1" : "0");
  refillOnChange(group, `${state}\n${actedOn}`, () => nodeParts(group, name, at, state, actedOn));
}

/** The map's SVG with its edges and an empty group per service: {root, nodes: Map name -> g}. */
function drawMap(calls, position) {
  const root = svg("svg", { id: "episode-map-svg", viewBox: `0 0 ${position.width} ${position.height}`, role: "img" });
  root.append(svg("defs", null, svg("marker", { id: "map-arrow", viewBox: "0 0 10 10", refX: "9", refY: "5", markerWidth: "7", markerHeight: "7", orient: "auto-start-reverse" }, svg("path", { d: "M 0 0 L 10 5 L 0 10 z", class: "map-arrowhead" }))));
  for (const [caller, callees] of calls) {
    for (const callee of callees) root.append(edge(caller, callee, position.position.get(caller), position.position.get(callee)));
  }
  const nodes = new Map();
  for (const name of position.position.keys()) {
    const group = svg("g", { dataset: { service: name } });
    nodes.set(name, group);
    root.append(group);
  }
  return { root, nodes };
}

const drawn = { key: null, at: null, map: null };

/**
 * Draw the dependency map of the observation in force (or say that it has none). The SVG is
 * built once per dependency graph; from step to step only the nodes' status and the acted-on
 * mark change.
 */
export function renderMap(observation, env) {
  const body = byId("episode-map-body");
  const dependencies = list(observation && observation.service_dependencies).filter((entry) => isObject(entry) && typeof entry.service === "string");
  setHidden(byId("episode-map-empty"), dependencies.length > 0);
  if (!setHidden(byId("episode-map-legend"), !dependencies.length)) {
    drawn.key = null;
    fill(body);
    return;
  }
  const key = JSON.stringify(dependencies);
  if (drawn.key !== key || !body.contains(drawn.map && drawn.map.root)) {
    const { calls, columns } = mapLayout(dependencies);
    drawn.key = key;
    drawn.at = positions(columns);
    drawn.map = drawMap(calls, drawn.at);
    fill(body, drawn.map.root);
  }
  const at = drawn.at;
  const status = new Map(serviceRows(observation).map((row) => [row.name, String(row.status ?? "unknown")]));
  for (const [name, group] of drawn.map.nodes) applyNode(group, name, at.position.get(name), status.get(name) || "unknown", Boolean(env && env.acted_on === name));
  setAttr(drawn.map.root, "aria-label", `Service dependency map: ${at.position.size} services; arrows point from caller to callee${env && env.acted_on ? `; acted on: ${env.acted_on}` : ""}`);
  const missing = serviceRows(observation).map((row) => row.name).filter((name) => !at.position.has(name));
  setText(byId("episode-map-missing"), missing.length ? ` Not in the map: ${missing.join(", ")}.` : "");
}
