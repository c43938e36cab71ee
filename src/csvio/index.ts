// CSV the program writes (reports, exports) and the formula guard shared with intake.
export { guardCell, unguardCell } from './guard.js';
export { csvLine, createCsvWriter } from './write.js';
export type { CsvWriter, CsvWriterOptions } from './write.js';
