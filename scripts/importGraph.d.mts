// Types of importGraph.mjs for the TypeScript that imports it (test/imports.test.ts).
/**
 * file -> the files it imports as values (with `types`, as types too), paths relative to src/
 * with '/'.
 */
export function fileGraph(root?: string, options?: { types?: boolean }): Map<string, Set<string>>;
/** folder -> folder -> the imports ("file -> target") that make the edge. */
export function folderGraph(files?: Map<string, Set<string>>): Map<string, Map<string, string[]>>;
/** The folder of a path relative to src/. */
export function folderOf(relative: string): string;
/** The strongly connected sets of two or more nodes, each sorted. */
export function circles(edges: Map<string, { keys(): Iterable<string> }>): string[][];
