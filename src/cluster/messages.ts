/**
 * What a cluster worker and its primary say to each other over the IPC channel (node:cluster's
 * process.send). Every message carries `mds`, so Node's and prom-client's own messages on the
 * same channel are told apart.
 */

/** How long the primary waits for every worker's metrics before answering with those it has. */
export const METRICS_WAIT_MS = 2000;

/**
 * The limits a request is counted against: `[key id, per minute, per day, day floor, minute
 * floor, day unreported, minute unreported]`. The floors are counts the worker knows of (the
 * stored day count, Redis's last answer): the primary raises its counters to them. The
 * unreported counts are requests the worker decided alone since its last answer (the primary
 * did not answer in time): the primary adds them, so an instance's count stays the sum of what
 * its workers served.
 */
export type LimitItem = [
  id: string,
  ratePerMinute: number | null,
  dailyQuota: number | null,
  dayFloor: number,
  minuteFloor: number,
  dayUnreported: number,
  minuteUnreported: number,
];
/** `[refusal, minute count, day count]` (counts after the request; before it when refused). */
export type LimitTally = [code: 4030 | 4031 | null, minuteCount: number, dayCount: number];
/** A batch event (`batch` or `revert`) as the ingest service emitted it. */
export interface RelayedEvent {
  kind: string;
  payload: unknown;
}

/**
 * Worker → primary: questions (answered with the same `id`; `at` is when the worker asked, by
 * its clock, which is the primary's: a question the worker has given up on is not acted on)
 * and events to pass on.
 */
export type ToPrimary =
  | { mds: 'limit'; id: number; at: number; items: LimitItem[] }
  | { mds: 'peek'; id: number; at: number; ids: string[] }
  | { mds: 'metrics'; id: number; at: number }
  | { mds: 'ping'; id: number; at: number }
  | { mds: 'metrics-part'; id: number; metrics: unknown[] }
  | ({ mds: 'event' } & RelayedEvent)
  | { mds: 'ready' };

/**
 * Who decides rate limits for the instance's workers under Redis: Redis (`shared`), or the
 * supervisor (`instance`: Redis unreachable, or the supervisor's outage count not yet handed
 * over to it). See cluster/instance-limits.ts.
 */
export type LimitsMode = 'shared' | 'instance';

/**
 * Primary → worker: answers, events from any worker (its own included), a call for its metrics,
 * who decides limits (sent to every worker when it changes, and to a worker when it serves).
 */
export type ToWorker =
  | { mds: 'reply'; id: number; body?: unknown; error?: string }
  | { mds: 'limits-mode'; mode: LimitsMode }
  | ({ mds: 'event' } & RelayedEvent)
  | { mds: 'metrics-collect'; id: number };

export function isMdsMessage<T extends { mds: string }>(m: unknown): m is T {
  return typeof m === 'object' && m !== null && typeof (m as { mds?: unknown }).mds === 'string';
}
