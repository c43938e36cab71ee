// The thread that counts a file's rows per group (see groupCounts.ts): the counts go straight
// into memory shared with intake; the message says how the count ended.
import { parentPort, workerData } from 'node:worker_threads';
import { countRows, type CountJob } from './groupCounts.js';

parentPort!.postMessage(countRows(workerData as CountJob));
