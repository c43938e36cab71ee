// The folder-level import graph of src/ (issue 31): which folders import which, counting value
// imports only (`import type` and all-`type` specifier lists are left out, they vanish at run
// time), and the circles among folders (strongly connected sets of two or more). A file directly in
// src/ (errors.ts, cli.ts) counts as a folder of its own.
//   node scripts/importGraph.mjs            the circles and the two-folder circles
//   node scripts/importGraph.mjs --edges    also every edge with the imports that make it
import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';

const root = path.resolve('src');
const FROM = /(?:^|\n)\s*(?:import|export)\s+(type\s+)?([\s\S]*?)\s*from\s*['"](\.[^'"]+)['"]/g;
const BARE = /(?:^|\n)\s*import\s+['"](\.[^'"]+)['"]/g;

function sourceFiles(dir) {
  return readdirSync(dir).flatMap((name) => {
    const file = path.join(dir, name);
    if (statSync(file).isDirectory()) return sourceFiles(file);
    return name.endsWith('.ts') ? [file] : [];
  });
}

function folderOf(file) {
  const parts = path.relative(root, file).split(path.sep);
  return parts.length === 1 ? parts[0].replace(/\.ts$/, '') : parts[0];
}

/** Only types named: `{ type A, type B }` (a default or namespace import is a value). */
function typesOnly(specifiers) {
  const list = /^\{([\s\S]*)\}$/.exec(specifiers.trim());
  if (!list) return false;
  const names = list[1]
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  return names.length > 0 && names.every((name) => name.startsWith('type '));
}

function valueImports(text) {
  const targets = [];
  for (const [, typeKeyword, specifiers, target] of text.matchAll(FROM))
    if (!typeKeyword && !typesOnly(specifiers)) targets.push(target);
  for (const [, target] of text.matchAll(BARE)) targets.push(target);
  return targets;
}

/** folder -> folder -> the imports ("file -> target") that make the edge. */
function folderGraph() {
  const edges = new Map();
  for (const file of sourceFiles(root)) {
    for (const target of valueImports(readFileSync(file, 'utf8'))) {
      const from = folderOf(file);
      const to = folderOf(path.resolve(path.dirname(file), target));
      if (from === to) continue;
      if (!edges.has(from)) edges.set(from, new Map());
      const why = edges.get(from);
      if (!why.has(to)) why.set(to, []);
      why.get(to).push(`${path.relative(root, file)} -> ${target}`);
    }
  }
  return edges;
}

/** Tarjan's strongly connected components with more than one member. */
function circles(edges) {
  let next = 0;
  const index = new Map();
  const low = new Map();
  const stack = [];
  const found = [];
  const visit = (node) => {
    index.set(node, next);
    low.set(node, next++);
    stack.push(node);
    for (const to of edges.get(node)?.keys() ?? []) {
      if (!index.has(to)) {
        visit(to);
        low.set(node, Math.min(low.get(node), low.get(to)));
      } else if (stack.includes(to)) low.set(node, Math.min(low.get(node), index.get(to)));
    }
    if (low.get(node) !== index.get(node)) return;
    const set = [];
    let member;
    do set.push((member = stack.pop()));
    while (member !== node);
    if (set.length > 1) found.push(set.sort());
  };
  const nodes = new Set([...edges.keys(), ...[...edges.values()].flatMap((m) => [...m.keys()])]);
  for (const node of nodes) if (!index.has(node)) visit(node);
  return found;
}

const edges = folderGraph();
console.log('folder circles (value imports):');
for (const set of circles(edges)) console.log(`  {${set.join(', ')}}`);
const pairs = [];
for (const [from, to] of edges)
  for (const other of to.keys())
    if (from < other && edges.get(other)?.has(from)) pairs.push(`${from}<->${other}`);
console.log(`two-folder circles: ${pairs.join(', ') || 'none'}`);
if (process.argv.includes('--edges'))
  for (const [from, to] of [...edges].sort())
    for (const [other, why] of [...to].sort())
      console.log(`${from} -> ${other}\n    ${why.join('\n    ')}`);
