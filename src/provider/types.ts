// The vocabulary shared by the Template SMS client, the simulator and the pipeline.

export type BodyFormat = 'json' | 'xml';

/** One Template SMS request, before encoding. `to` holds distinct numbers, in order. */
export interface TemplateSmsRequest {
  to: string[];
  appId: string;
  templateId: string;
  /** Template values in order; empty when the template has no variables. */
  datas: string[];
  /** Caller's request id (<= 32 chars, unique per account per day): makes a retry safe. */
  reqId?: string;
}

/**
 * How a sender should treat a non-success status code (see provider-facts.md). The table that
 * maps codes to classes is data, in codes.ts.
 */
export type RejectionClass =
  | 'account-fatal'
  | 'clock'
  | 'transient'
  | 'rate-limited'
  | 'number-rejected'
  | 'batch-rejected'
  | 'duplicate-request'
  | 'ambiguous'
  | 'outside-hours';

/**
 * The one result of a send call. The client never throws: every path ends in one of these.
 * - accepted: statusCode 000000.
 * - rejected: the server answered with another statusCode (or the client refused the request
 *   before sending it, `local: true`, classed as the provider's answer with that code would be).
 * - not-sent: nothing reached the server (connect refused/timeout, DNS, TLS handshake): safe to
 *   retry.
 * - in-doubt: the request may have been received (reset or timeout after writing, non-200,
 *   malformed body): retry only with the same reqId.
 */
export type SendOutcome =
  | { kind: 'accepted'; statusCode: '000000'; smsMessageSid: string; dateCreated: string }
  | {
      kind: 'rejected';
      statusCode: string;
      codeClass: RejectionClass;
      statusMsg?: string;
      local?: boolean;
    }
  | {
      kind: 'not-sent';
      reason: string;
      /**
       * E_PROVIDER_TLS: the server's certificate is not trusted (self-signed, expired, another
       * host's, an unknown CA) or it speaks no TLS. A set-up mistake: trying again cannot help.
       */
      code?: 'E_PROVIDER_TLS';
      /** The caller's mayStart refused it as it was about to be written (client.ts SendOptions). */
      fenced?: true;
    }
  | { kind: 'in-doubt'; reason: string; httpStatus?: number };

export type OutcomeKind = SendOutcome['kind'];

export interface SendOptions {
  signal?: AbortSignal;
  /**
   * Asked at the last moment before the request is written to its socket (once a connection is
   * ready): false, and nothing is written: `not-sent` with `fenced`. A node of a cluster asks
   * whether its lease of the batch still holds (pgjournal/leases.ts).
   */
  mayStart?: () => boolean;
}
