/**
 * What a cluster worker and its primary say to each other over the IPC channel (node:cluster's
 * process.send). Every message carries `mds`, so Node's and prom-client's own messages on the
 * same channel are told apart.
 */

/** The limits a request is counted against: `[key id, per minute, per day, stored day count]`. */
export type LimitItem = [
  id: string,
  ratePerMinute: number | null,
  dailyQuota: number | null,
  dayFloor: number,
];
/** `[refusal, minute count, day count]` (counts after the request; before it when refused). */
export type LimitTally = [code: 4030 | 4031 | null, minuteCount: number, dayCount: number];
/** A batch event (`batch` or `revert`) as the ingest service emitted it. */
export interface RelayedEvent {
  kind: string;
  payload: unknown;
}

/** Worker → primary: questions (answered with the same `id`) and events to pass on. */
export type ToPrimary =
  | { mds: 'limit'; id: number; items: LimitItem[] }
  | { mds: 'peek'; id: number; ids: string[] }
  | { mds: 'metrics'; id: number }
  | { mds: 'metrics-part'; id: number; metrics: unknown[] }
  | ({ mds: 'event' } & RelayedEvent)
  | { mds: 'ready' };

/** Primary → worker: answers, events from any worker (its own included), a call for its metrics. */
export type ToWorker =
  | { mds: 'reply'; id: number; body?: unknown; error?: string }
  | ({ mds: 'event' } & RelayedEvent)
  | { mds: 'metrics-collect'; id: number };

export function isMdsMessage<T extends { mds: string }>(m: unknown): m is T {
  return typeof m === 'object' && m !== null && typeof (m as { mds?: unknown }).mds === 'string';
}
