/**
 * Where a batch's time goes, step by step (docs/performance.md, "Ingest profile"): the ingest
 * thread laps a clock at the end of each step and the service exports the seconds as the
 * histogram `mds_batch_step_seconds{step}` (http/metrics-routes.ts). Wall time, so a step that
 * waits for the database (PostgreSQL) counts its wait.
 */
export const BATCH_STEPS = [
  /** UTF-8, JSON, repeated keys and underflows, meta. */
  'parse',
  /** The records' SHA-256 against the one sent. */
  'checksum',
  /** The batch_id registry's early answer (one read). */
  'registry',
  /** Each record checked and normalised, duplicates inside the batch. */
  'validation',
  /** The transaction's start: the batch_id claimed, the dataset's lock, the changes' instant. */
  'claim',
  /** The rows upserted with their JSON (on SQLite with the versions they replace). */
  'rows',
  /** What the rows replaced or ended kept as revisions (beyond the upsert's own). */
  'revisions',
  /** A full snapshot's prune. */
  'prune',
  /** The per-code quality summaries of the codes changed. */
  'quality',
  /** The stored weekly and monthly bars of the periods changed. */
  'periods',
  /** The dataset's version and the batch's status record. */
  'record',
  /** COMMIT (on SQLite the WAL write and its fsync, and a checkpoint when one is due). */
  'commit',
] as const;

export type BatchStep = (typeof BATCH_STEPS)[number];

/** Seconds per step of one batch (steps it did not run are absent). */
export type BatchStepSeconds = Partial<Record<BatchStep, number>>;

/** A lap clock: each `lap(step)` adds the time since the previous lap to that step. */
export class StepClock {
  readonly seconds: BatchStepSeconds = {};
  private last = performance.now();

  lap(step: BatchStep): void {
    const t = performance.now();
    this.seconds[step] = (this.seconds[step] ?? 0) + (t - this.last) / 1000;
    this.last = t;
  }
}

/** Laps `clock` (when there is one) at `step`: for steps that take an optional clock. */
export const lap = (clock: StepClock | undefined, step: BatchStep): void => clock?.lap(step);
