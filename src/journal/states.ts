// Moved to src/ports/states.ts (the shared vocabulary of the ports); kept until every caller
// imports it from there.
export * from '../ports/states.js';
