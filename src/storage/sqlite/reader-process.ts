import { StoreUnavailableError } from '../store.js';
import type { ReadReply, ReadRequest, ReaderInit } from './reader-pool.js';
import { SqliteDb } from './sqlite-db.js';
import { lowerThreadPriority } from '../../thread-priority.js';
import { toColumns } from '../../model/value-columns.js';
import type { Value } from '../../model/values.js';

/**
 * Nice steps below the request thread: on a busy machine requests and /health get the CPU
 * before a long sort does; above the ingest threads (MDS_INGEST_NICE, 10), queries being
 * someone's wait.
 */
const READER_NICE = 5;

/**
 * One reader process (reader-pool.ts): its own read-only connection, one statement at a time,
 * as compiled on the request thread. It ends with its parent's IPC channel (a worker that dies
 * leaves no reader behind).
 */
const send = process.send?.bind(process);
if (!send) throw new Error('reader-process.ts runs as a child of reader-pool.ts');
const { file } = JSON.parse(process.argv[2] ?? '{}') as ReaderInit;
lowerThreadPriority(READER_NICE);
const db = new SqliteDb({ file, checkpoints: 'none', readOnly: true });

process.on('disconnect', () => process.exit(0));
process.on('message', (req: ReadRequest) => {
  let reply: ReadReply;
  try {
    const value =
      req.mode === 'page'
        ? db.pageCompiled(req, req.count)
        : req.mode === 'columns'
          ? toColumns(db.readCompiled('arrays', req.sql, req.params) as Value[][])
          : db.readCompiled(req.mode, req.sql, req.params);
    reply = { id: req.id, ok: true, value };
  } catch (err) {
    const unavailable = err instanceof StoreUnavailableError;
    reply = {
      id: req.id,
      ok: false,
      error: {
        unavailable,
        condition: unavailable ? err.condition : '',
        message: err instanceof Error ? err.message : String(err),
      },
    };
  }
  send(reply);
});
