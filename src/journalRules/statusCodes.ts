// How a status code is kept where it goes with an outcome, on an attempt (its outcome) and on a
// batch (its state): the provider's success, which every accepted request answers, is not kept, so
// the journal does not hold its 7 bytes for each request and each batch; the reads put it back.
import { BATCH_STATE } from '../ports/states.js';

/** The provider's code of an accepted request: always this one (provider/types.ts, 'accepted'). */
const ACCEPTED_CODE = '000000';

/** What status_code keeps of the code of an outcome (an attempt's) or a state (a batch's). */
export function storedStatusCode(outcome: string, statusCode: string | null): string | null {
  return outcome === BATCH_STATE.accepted && statusCode === ACCEPTED_CODE ? null : statusCode;
}

/** SQL: the code as answered, of a record whose outcome is `outcome` and code `code` (columns). */
function codeAsAnswered(outcome: string, code: string): string {
  return `coalesce(${code}, CASE WHEN ${outcome} = '${BATCH_STATE.accepted}' THEN '${ACCEPTED_CODE}' END)`;
}

/** SQL: an attempt's status code, as the provider answered it. */
export const ATTEMPT_CODE = codeAsAnswered('outcome', 'status_code');

/** SQL: the status code of the batch `batch` (an alias or the table's name), as answered. */
export function batchCode(batch: string): string {
  return codeAsAnswered(`${batch}.state`, `${batch}.status_code`);
}
