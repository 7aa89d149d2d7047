import diagnosticsChannel from 'node:diagnostics_channel';
import { EventEmitter } from 'node:events';
import type { Catalog, Dataset } from '../catalog/catalog.js';
import { AppError } from '../errors.js';
import type { Store, WriteBatch } from '../storage/store.js';
import type { ApplyResult, BatchRecord, RecordError, RevertCounts } from '../model/batch.js';
import { createHash } from 'node:crypto';
import { parseBatchRequest, type BatchMeta, type BatchRequest } from './batch-request.js';
import {
  holdsId,
  outcomeOf,
  repeatOf,
  type IngestOutcome,
  type SameContent,
} from '../model/batch-registry.js';
import { matchChecksum } from './checksum.js';
import { parseBatchBody, type RecordIssue } from './batch-body.js';
import { recordValidator, type RecordContext, type RecordResult } from './record-validation.js';
import { revertBatchId } from '../model/revisions.js';
import { StepClock } from '../model/batch-steps.js';
import { isCleanText, isPlainObject, type Row } from '../model/values.js';
import { barMinute, barsOfRows, blockWrite, groupBars } from './minute-bars.js';
import { parseMinuteBatch, type MinuteBatch } from './minute-columns.js';

export type { IngestOutcome } from '../model/batch-registry.js';

/** What a batch writes: its rows, or its bars as block rows (minute-bars.ts `blockWrite`). */
type BatchWrite = Pick<WriteBatch, 'dataset' | 'rows' | 'blocks'>;

/** A revert that changed something: what the event stream and the metrics see. */
export interface RevertEvent extends RevertCounts {
  batch_id: string;
  dataset: string;
  reverted_at: string;
}

export interface IngestOptions {
  maxRecords: number;
  /** Clock, injectable for tests. */
  now?: () => Date;
}

/**
 * What the HTTP layer needs of ingest: IngestService in this thread, or IngestPool (worker
 * threads, ingest-pool.ts), which the service runs with by default.
 */
export interface BatchIngest {
  /**
   * Emits 'batch' (BatchRecord) after every processed batch, then 'steps' (BatchStepSeconds:
   * where its time went), and 'revert' (RevertEvent).
   */
  readonly events: EventEmitter;
  /** A batch as the request body's bytes (Content-Encoding undone). */
  ingestBytes(bytes: Uint8Array): Promise<IngestOutcome>;
  status(batchId: string): Promise<BatchRecord>;
  /** Puts back what a batch changed (IngestService.revert). */
  revert(batchId: string): Promise<{ record: BatchRecord; counts: RevertCounts }>;
}

/**
 * Published inside the batch transaction once every row is written, just before commit and
 * before the instant its changes become known is taken, with `{ batchId }` (a revert's too,
 * as `revert:<id>`). A seam for tracing and for tests (a crash at exactly that point, a batch held
 * while queries are answered: test/helpers/ingest-hooks.ts); subscribers run synchronously,
 * inside the transaction. Nothing is published while nobody subscribes.
 */
export const BEFORE_COMMIT = diagnosticsChannel.channel('mds:ingest:before-commit');

/**
 * Published, like BEFORE_COMMIT, once the changes' known instant is recorded: the last thing
 * before COMMIT (SQLite's read gate is held from just before that instant: a test holds a change
 * here to show reads wait for it).
 */
export const AFTER_KNOWN = diagnosticsChannel.channel('mds:ingest:after-known');

export const PRUNE_SKIPPED =
  'full snapshot prune skipped: some records were rejected, so nothing was deleted';

/**
 * The batch ingest rules of decisions.md, in their order: body shape and meta (400) →
 * checksum (422/4220) → batch_id registry (duplicate / 409) → records → one transaction.
 */
export class IngestService implements BatchIngest {
  /**
   * Emits 'batch' (BatchRecord) after every processed batch, 'steps' (its BatchStepSeconds),
   * and 'revert' (RevertEvent) after every revert that changed something: for metrics and the
   * event stream.
   */
  readonly events = new EventEmitter();
  private readonly validators = new Map<string, ReturnType<typeof recordValidator>>();
  private readonly clock: () => Date;

  constructor(
    private readonly catalog: Catalog,
    private readonly store: Pick<Store, 'batches' | 'revisions'>,
    private readonly opts: IngestOptions,
  ) {
    this.clock = opts.now ?? (() => new Date());
    this.events.setMaxListeners(0);
  }

  private validator(d: Dataset): ReturnType<typeof recordValidator> {
    let v = this.validators.get(d.name);
    if (!v) {
      v = recordValidator(d);
      this.validators.set(d.name, v);
    }
    return v;
  }

  /** A batch given as a value (the seeder, tests): the same path as its JSON text. */
  ingest(body: unknown): Promise<IngestOutcome> {
    return this.ingestBytes(Buffer.from(JSON.stringify(body)));
  }

  /** A batch as the request body's bytes (Content-Encoding undone). */
  async ingestBytes(bytes: Uint8Array): Promise<IngestOutcome> {
    const steps = new StepClock();
    // A minute batch the columnar path takes; any other batch (or one it leaves) the record path's.
    const minute = parseMinuteBatch(bytes, this.catalog, this.opts.maxRecords);
    if (minute !== null) {
      const outcome = await this.ingestColumns(minute, steps);
      if (outcome !== null) return outcome;
    }
    const parsed = parseBatchBody(bytes);
    const req = parseBatchRequest(parsed.body, this.catalog, this.opts.maxRecords);
    const { meta, dataset, records } = req;
    steps.lap('parse');
    if (matchChecksum(records, req.checksum, parsed.recordsBytes) === null) {
      throw new AppError(
        4220,
        'checksum mismatch: expected the SHA-256 of the records value as sent (from its [ to its ]), ' +
          'or of the records as JCS or compact JSON (docs/ingest.md)',
      );
    }
    steps.lap('checksum');
    // The registry's answer before validating records; asked again under the batch's lock.
    const prior = await this.store.batches.getBatch(meta.batch_id);
    steps.lap('registry');
    // Another accepted form of the same records is the same content (decisions.md).
    const sameContent: SameContent = (stored) =>
      stored === req.checksum || matchChecksum(records, stored, parsed.recordsBytes) !== null;
    if (holdsId(prior)) return repeatOf(prior, sameContent);

    const receivedAt = this.clock().toISOString();
    const full = meta.snapshot_type === 'full_snapshot';
    const ctx: RecordContext = {
      now: receivedAt,
      source: meta.source,
      partition: full ? { value: meta.business_date, source: meta.source } : null,
    };
    const validate = this.validator(dataset);
    const keyNames = dataset.key.map((k) => k.name);
    const errors: RecordError[] = [];
    const rows: Row[] = [];
    const given: number[] = [];
    const minutes: number[] = [];
    const seen = new Map<string, number>();
    let repeated = 0;
    for (let i = 0; i < records.length; i++) {
      const issue = parsed.recordIssues.get(i);
      if (issue) {
        errors.push(issueError(records[i], i, issue));
        continue;
      }
      const r: RecordResult = validate(records[i], i, ctx);
      if (!r.ok) {
        errors.push(r.error);
        continue;
      }
      const minute = dataset.blocks ? barMinute(dataset.blocks, r.row) : 0;
      if (typeof minute !== 'number') {
        errors.push({
          index: i,
          idempotency_key: r.idempotencyKey,
          field: minute.field,
          reason: minute.reason,
        });
        continue;
      }
      const key = keyString(keyNames.map((k) => r.row[k]));
      const before = seen.get(key);
      if (before !== undefined) {
        // Rows are built in catalog field order, so equal content means equal JSON.
        if (JSON.stringify(rows[before]) === JSON.stringify(r.row)) repeated++;
        else {
          errors.push({
            index: i,
            idempotency_key: r.idempotencyKey,
            field: 'unique_key',
            reason: 'conflicting duplicate key in batch',
          });
        }
        continue;
      }
      seen.set(key, rows.length);
      rows.push(r.row);
      given.push(r.updatedAtGiven ? 1 : 0);
      if (dataset.blocks) minutes.push(minute);
    }

    steps.lap('validation');
    let write: BatchWrite;
    if (dataset.blocks) {
      const bars = barsOfRows(dataset.blocks, rows, given, minutes);
      // Bars of one block and minute were answered above (repeated or conflicting): none left.
      const groups = groupBars(bars);
      if (groups === null) throw new Error('two bars of one block and minute after de-duplication');
      write = blockWrite(dataset.blocks, bars, groups, receivedAt, !full);
    } else write = { dataset, rows };
    return this.write(req, { receivedAt, errors, repeated, write, sameContent }, steps);
  }

  /**
   * A minute batch from the columnar path (minute-columns.ts); null when the record path must
   * take it: its checksum is neither of the bytes as sent nor of the JCS text (the compact
   * form is matched there), or two of its bars are one bar.
   */
  private async ingestColumns(minute: MinuteBatch, steps: StepClock): Promise<IngestOutcome | null> {
    const { req, recordsBytes, bars } = minute;
    const b = req.dataset.blocks;
    if (!b) return null;
    steps.lap('parse');
    // The bytes as sent, then JCS (as matchChecksum); the compact form is the record path's.
    if (
      createHash('sha256').update(recordsBytes).digest('hex') !== req.checksum &&
      minute.jcsSha256() !== req.checksum
    )
      return null;
    steps.lap('checksum');
    const groups = groupBars(bars);
    if (groups === null) return null;
    steps.lap('validation');
    const prior = await this.store.batches.getBatch(req.meta.batch_id);
    steps.lap('registry');
    // Another accepted form of the same records is the same content: it needs their values.
    const sameContent: SameContent = (stored) =>
      stored === req.checksum ||
      matchChecksum(JSON.parse(Buffer.from(recordsBytes).toString('utf8')), stored, recordsBytes) !== null;
    if (holdsId(prior)) return repeatOf(prior, sameContent);
    const receivedAt = this.clock().toISOString();
    const write = blockWrite(b, bars, groups, receivedAt, req.meta.snapshot_type !== 'full_snapshot');
    return this.write(req, { receivedAt, errors: [], repeated: 0, write, sameContent }, steps);
  }

  /** The batch's valid rows (or bar blocks) in one transaction, and its status record. */
  private async write(
    req: BatchRequest,
    valid: {
      receivedAt: string;
      errors: RecordError[];
      /** Records equal to an earlier one of the batch (duplicates). */
      repeated: number;
      write: BatchWrite;
      sameContent: SameContent;
    },
    steps: StepClock,
  ): Promise<IngestOutcome> {
    const { meta, dataset } = req;
    const { receivedAt, errors, repeated, sameContent } = valid;
    const full = meta.snapshot_type === 'full_snapshot';
    const rejected = errors.length;
    const build = (
      accepted: number,
      duplicate: number,
      pruned: number,
      extraErrors: RecordError[],
      processedAt = this.clock().toISOString(),
    ): BatchRecord => ({
      ...recordHead(meta, req.checksum),
      status: rejected === 0 ? 'accepted' : accepted + duplicate === 0 ? 'rejected' : 'partial',
      accepted,
      rejected,
      duplicate,
      pruned,
      errors: [...errors, ...extraErrors],
      created_at: receivedAt,
      processed_at: processedAt,
      reverted_at: null,
    });

    if (rejected > 0 && rejected === meta.record_count) {
      const result = await this.store.batches.saveRejectedBatch(build(0, 0, 0, []));
      return this.settle(result, sameContent);
    }
    const skipPrune = full && rejected > 0;
    const result = await this.store.batches.applyBatch(
      {
        batchId: meta.batch_id,
        ...valid.write,
        prune:
          full && !skipPrune
            ? { partitionValue: dataset.partition ? meta.business_date : null, source: meta.source }
            : null,
        now: receivedAt,
        clock: () => this.clock().toISOString(),
        beforeKnown: () => {
          if (BEFORE_COMMIT.hasSubscribers) BEFORE_COMMIT.publish({ batchId: meta.batch_id });
        },
        afterKnown: () => {
          if (AFTER_KNOWN.hasSubscribers) AFTER_KNOWN.publish({ batchId: meta.batch_id });
        },
        steps,
      },
      (o) => {
        // Bar blocks count bars, not the block rows written.
        const record = build(
          o.bars?.accepted ?? o.written,
          (o.bars?.unchanged ?? o.unchanged) + repeated,
          o.pruned,
          skipPrune ? [{ index: null, idempotency_key: null, field: null, reason: PRUNE_SKIPPED }] : [],
          o.processedAt,
        );
        return record;
      },
    );
    // The time since the transaction's last step: its COMMIT.
    steps.lap('commit');
    return this.settle(result, sameContent, steps);
  }

  private settle(result: ApplyResult, sameContent: SameContent, steps?: StepClock): IngestOutcome {
    const outcome = outcomeOf(result, sameContent);
    if (outcome.kind !== 'processed') return outcome;
    this.events.emit('batch', outcome.record);
    if (!steps) return outcome;
    this.events.emit('steps', steps.seconds);
    return { ...outcome, steps: steps.seconds };
  }

  /**
   * POST /admin/api/batches/{id}/revert: puts back what the batch changed (docs/point-in-time.md).
   * 404 / 4040 unknown; 409 / 4092 a later batch changed some of its rows (up to 100 keys
   * listed); 409 / 4093 what it replaced is not kept. Already reverted: zero counts.
   */
  async revert(batchId: string): Promise<{ record: BatchRecord; counts: RevertCounts }> {
    const result = isCleanText(batchId)
      ? await this.store.revisions.revertBatch(batchId, () => this.clock().toISOString(), {
          beforeKnown: () => {
            if (BEFORE_COMMIT.hasSubscribers) BEFORE_COMMIT.publish({ batchId: revertBatchId(batchId) });
          },
          afterKnown: () => {
            if (AFTER_KNOWN.hasSubscribers) AFTER_KNOWN.publish({ batchId: revertBatchId(batchId) });
          },
        })
      : ({ kind: 'not_found' } as const);
    switch (result.kind) {
      case 'not_found':
        throw new AppError(4040, `batch ${batchId} not found`);
      case 'conflict':
        throw new AppError(
          4092,
          `revert conflicts with a later batch: ${result.total} of the rows batch ${batchId} changed were changed since`,
          { extra: { conflicts: result.keys, conflict_count: result.total } },
        );
      case 'no_history':
        throw new AppError(4093, `batch ${batchId} cannot be reverted: ${result.reason}`);
      case 'reverted': {
        if (!result.already) {
          const event: RevertEvent = {
            batch_id: batchId,
            dataset: result.record.dataset,
            reverted_at: result.record.reverted_at ?? '',
            ...result.counts,
          };
          this.events.emit('revert', event);
        }
        return { record: result.record, counts: result.counts };
      }
    }
  }

  status(batchId: string): Promise<BatchRecord> {
    return batchStatus(this.store, batchId);
  }
}

/** The status record of a batch, or 404 / 4040. */
export async function batchStatus(store: Pick<Store, 'batches'>, batchId: string): Promise<BatchRecord> {
  // No stored batch_id holds NUL or a lone surrogate (meta refuses them), and PostgreSQL
  // cannot compare such text: answer "not found" without asking the database.
  const rec = isCleanText(batchId) ? await store.batches.getBatch(batchId) : null;
  if (!rec) throw new AppError(4040, `batch ${batchId} not found`);
  return rec;
}

/** A record refused for what only its text shows (a repeated key, an underflow). */
function issueError(record: unknown, index: number, issue: RecordIssue): RecordError {
  const idem = isPlainObject(record) ? record.idempotency_key : undefined;
  return {
    index,
    idempotency_key: typeof idem === 'string' && idem.length > 0 && isCleanText(idem) ? idem : null,
    field: issue.field,
    reason: issue.reason,
  };
}

function recordHead(meta: BatchMeta, checksum: string) {
  return {
    batch_id: meta.batch_id,
    dataset: meta.dataset,
    source: meta.source,
    operation: meta.operation,
    snapshot_type: meta.snapshot_type,
    business_date: meta.business_date,
    source_system: meta.source_system,
    source_run_id: meta.source_run_id,
    record_count: meta.record_count,
    checksum,
  };
}

/** A stable string for a row's unique key, to compare key sets in memory. */
export function keyString(values: readonly unknown[]): string {
  return JSON.stringify(values);
}
