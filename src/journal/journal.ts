// Moved: the Journal object lives in connection.ts.
export * from './connection.js';
