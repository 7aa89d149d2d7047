import { parentPort } from 'node:worker_threads';
import { lowerThreadPriority } from '../thread-priority.js';
import type { Value } from '../model/values.js';
import { ownBytes } from '../worker-threads.js';
import { exportStream, type RowChunk } from './export-formats.js';
import type { ColumnChunk } from './column-batch.js';
import type { ValueColumns } from '../model/value-columns.js';
import { ENCODER_NICE, type EncoderReply, type EncoderRequest, type RowsKind } from './encoder-pool.js';

/**
 * One export encoding thread (encoder-pool.ts): each export open on it is the same
 * `exportStream` the request thread would run, its rows asked of the request thread one chunk at
 * a time (`need`), its bytes handed back one piece per `pull`. Nothing is read or encoded ahead
 * of the client, as on the request thread.
 */
const port = parentPort;
if (!port) throw new Error('encoder-thread.ts runs as a worker thread (encoder-pool.ts)');
lowerThreadPriority(ENCODER_NICE);

/** The export's client went away (or the request thread failed it): its encoding stops. */
class ExportClosed extends Error {}

/** Where one export's encoder takes its rows from. */
interface Feed {
  /** The encoder's wait for its next chunk of rows, while the request thread reads it. */
  waiting: { resolve: (rows: unknown[] | ValueColumns | null) => void; reject: (e: Error) => void } | null;
  closed: boolean;
}

interface Session {
  feed: Feed;
  pieces: AsyncIterator<string | Uint8Array>;
}

const sessions = new Map<number, Session>();
const text = new TextEncoder();

function post(m: EncoderReply, transfer: ArrayBuffer[] = []): void {
  port?.postMessage(m, transfer);
}

/** The rows of one export, asked of the request thread chunk by chunk as the encoder wants them. */
async function* rowsOf<R>(id: number, s: Feed, kind: RowsKind): AsyncGenerator<R> {
  for (;;) {
    if (s.closed) throw new ExportClosed();
    const rows = await new Promise<unknown[] | ValueColumns | null>((resolve, reject) => {
      s.waiting = { resolve, reject };
      post({ t: 'need', id, kind });
    });
    if (rows === null) return;
    yield rows as R;
  }
}

async function pull(id: number, s: Session): Promise<void> {
  try {
    const next = await s.pieces.next();
    if (s.feed.closed) return;
    if (next.done === true) {
      sessions.delete(id);
      post({ t: 'done', id });
      return;
    }
    // Text is encoded here too: the request thread only moves bytes.
    const bytes = ownBytes(typeof next.value === 'string' ? text.encode(next.value) : next.value);
    post({ t: 'piece', id, bytes }, [bytes.buffer]);
  } catch (err) {
    sessions.delete(id);
    if (!(err instanceof ExportClosed)) {
      post({ t: 'error', id, message: err instanceof Error ? err.message : String(err) });
    }
  }
}

port.on('message', (m: EncoderRequest) => {
  if (m.t === 'open') {
    const feed: Feed = { waiting: null, closed: false };
    const pieces = exportStream(m.format, m.fields, {
      objects: () => rowsOf<Record<string, Value>[]>(m.id, feed, 'objects'),
      arrays: () => rowsOf<RowChunk>(m.id, feed, 'arrays'),
      ...(m.columns ? { columns: () => rowsOf<ColumnChunk[]>(m.id, feed, 'columns') } : {}),
    })[Symbol.asyncIterator]();
    sessions.set(m.id, { feed, pieces });
    return;
  }
  const s = sessions.get(m.id);
  if (!s) return;
  const { feed } = s;
  const waiting = feed.waiting;
  if (m.t === 'pull') void pull(m.id, s);
  else if (m.t === 'rows' || m.t === 'columns' || m.t === 'end') {
    feed.waiting = null;
    waiting?.resolve(m.t === 'rows' ? m.rows : m.t === 'columns' ? m.chunk : null);
  } else {
    // close: a waiting encoder fails at once (its writer is dropped, no footer is made).
    feed.closed = true;
    feed.waiting = null;
    sessions.delete(m.id);
    waiting?.reject(new ExportClosed());
    void s.pieces.return?.(undefined)?.catch(() => {});
  }
});
