import assert from 'node:assert/strict';
import fs from 'node:fs';
import { after, describe, test } from 'node:test';
import { CATALOG } from '../../src/catalog/catalog.js';
import { ExportEncoders } from '../../src/export/encoder-pool.js';
import {
  EXPORT_FORMATS,
  exportStream,
  type ExportFormat,
  type ExportSource,
} from '../../src/export/export-formats.js';
import type { Value } from '../../src/model/values.js';
import { toColumns, type ValueColumns } from '../../src/model/value-columns.js';
import { exportRow } from '../helpers/sample-rows.js';

/**
 * Issue 24: an export's encoding (CSV, NDJSON, Arrow, Parquet) runs on a thread of its own
 * (export/encoder-pool.ts), never on the thread that answers /health. Here, on real worker
 * threads: the bytes are those the request thread would make, in every format; the request
 * thread's CPU for an export is a fraction of what encoding it there costs; an export that ends
 * early stops its reads; a failing read fails the export with its own error; a shutdown cuts
 * the exports in flight. From outside (HTTP, both backends, the files read by pyarrow):
 * columnar-formats.test.ts, faults-exports.test.ts, query-features.test.ts; /health during
 * exports: the bench's freeze phase.
 */

const etf = CATALOG.byName.get('etf_daily');
assert.ok(etf);
const FIELDS = etf.rowFields;
const FORMATS = Object.keys(EXPORT_FORMATS) as ExportFormat[];

/** A quoted source: CSV's escaping is part of what both threads must agree on. */
const row = (i: number): Value[] => exportRow(FIELDS, i, 'test, "quoted"');

/**
 * `total` rows in chunks of 1,000, read either way (`columns`: also column by column, as the
 * daily datasets' exports are: QueryService.streamColumns); throws `fail` before the chunk at `failAt`.
 */
function source(total: number, fail?: { at: number; error: Error }, chunks?: Value[][][], columns = false) {
  const state = { read: 0, finished: false };
  const all = chunks ?? [];
  if (!chunks) {
    for (let at = 0; at < total; at += 1000) {
      all.push(Array.from({ length: Math.min(1000, total - at) }, (_, k) => row(at + k)));
    }
  }
  async function* arrays(): AsyncGenerator<Value[][]> {
    try {
      for (const [n, rows] of all.entries()) {
        if (fail && n * 1000 >= fail.at) throw fail.error;
        state.read += rows.length;
        yield rows;
      }
    } finally {
      state.finished = true;
    }
  }
  async function* objects(): AsyncGenerator<Record<string, Value>[]> {
    for await (const rows of arrays()) {
      yield rows.map((r) => Object.fromEntries(FIELDS.map((f, j) => [f.apiName, r[j] ?? null])));
    }
  }
  async function* columnChunks(): AsyncGenerator<ValueColumns> {
    for await (const rows of arrays()) yield toColumns(rows);
  }
  const src: ExportSource = { objects, arrays: columns ? columnChunks : arrays };
  return { src, state, chunks: all };
}

async function collect(stream: AsyncIterable<string | Uint8Array>): Promise<Buffer> {
  const parts: Buffer[] = [];
  for await (const p of stream) parts.push(typeof p === 'string' ? Buffer.from(p) : Buffer.from(p));
  return Buffer.concat(parts);
}

/** CPU seconds of this process's main thread so far (Linux: its task's stat). */
function mainThreadCpu(): number {
  const stat = fs.readFileSync(`/proc/self/task/${process.pid}/stat`, 'utf8');
  const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(f[11]) + Number(f[12])) / 100;
}

describe('export encoding threads (issue 24)', () => {
  const encoders = new ExportEncoders(2);
  after(() => encoders.close());

  for (const format of FORMATS) {
    test(`${format}: the same bytes as encoded on the request thread, with rows and without, rows sent as rows or columns`, async () => {
      for (const total of [0, 2_500, 20_000]) {
        const here = await collect(exportStream(format, FIELDS, source(total).src));
        for (const columns of [false, true]) {
          const there = await collect(
            encoders.encode(format, FIELDS, source(total, undefined, undefined, columns).src),
          );
          assert.ok(total === 0 || here.length > 0);
          assert.ok(
            there.equals(here),
            `${format}, ${total} rows, columns ${columns}: ${there.length} bytes against ${here.length}`,
          );
        }
      }
    });
  }

  test('several exports at once on two threads each get their own bytes', async () => {
    const runs = FORMATS.flatMap((f) => [f, f]).map((f, i) => ({ f, total: 3_000 + i * 1_000 }));
    const got = await Promise.all(
      runs.map(({ f, total }) => collect(encoders.encode(f, FIELDS, source(total).src))),
    );
    for (const [i, { f, total }] of runs.entries()) {
      const want = await collect(exportStream(f, FIELDS, source(total).src));
      assert.ok((got[i] as Buffer).equals(want), `${f} ${total}`);
    }
  });

  test(
    'the request thread spends a fraction of the CPU it spends encoding the export itself',
    {
      skip: fs.existsSync('/proc/self/task') ? false : 'no per-thread CPU here (Linux /proc)',
    },
    async (t) => {
      // The same 60,000 rows, made once: what is measured is the export's work, not the rows'.
      const { chunks } = source(60_000);
      const cpu = async (enc: ExportEncoders): Promise<number> => {
        const t = mainThreadCpu();
        await collect(enc.encode('csv', FIELDS, source(0, undefined, chunks).src));
        return mainThreadCpu() - t;
      };
      const inline = new ExportEncoders(0);
      await cpu(encoders); // the thread started, its modules loaded
      const here = await cpu(inline);
      const there = await cpu(encoders);
      t.diagnostic(`request thread: ${there.toFixed(2)} s with threads, ${here.toFixed(2)} s without`);
      // Measured: 0.2–0.3× (what is left: the rows' structured clones, the bytes' hand-over).
      assert.ok(
        there < here * 0.6,
        `request thread ${there.toFixed(2)} s with threads, ${here.toFixed(2)} s without`,
      );
    },
  );

  test('a client that leaves stops the reads, and the thread takes the next export', async () => {
    for (const [format, columns] of FORMATS.flatMap((f) => [[f, false] as const, [f, true] as const])) {
      const { src, state } = source(100_000, undefined, undefined, columns);
      const it = encoders.encode(format, FIELDS, src)[Symbol.asyncIterator]();
      // Past the header (CSV's comes before any row is read).
      while (state.read === 0) assert.equal((await it.next()).done, false);
      await it.return?.(undefined);
      assert.ok(state.finished, format);
      assert.ok(state.read < 100_000, `${format} read ${state.read} rows`);
    }
    const want = await collect(exportStream('csv', FIELDS, source(1_500).src));
    assert.ok((await collect(encoders.encode('csv', FIELDS, source(1_500).src))).equals(want));
  });

  test("a failing read fails the export with the read's own error, before its end", async () => {
    class ChangedError extends Error {}
    for (const [format, columns] of FORMATS.flatMap((f) => [[f, false] as const, [f, true] as const])) {
      const error = new ChangedError('dataset changed');
      const { src, state } = source(30_000, { at: 12_000, error }, undefined, columns);
      const parts: Uint8Array[] = [];
      await assert.rejects(
        async () => {
          for await (const p of encoders.encode(format, FIELDS, src)) parts.push(Buffer.from(p));
        },
        (e) => e === error,
      );
      assert.ok(state.finished);
      const bytes = Buffer.concat(parts);
      // Parquet: no footer, so no reader takes the cut file for a whole one.
      if (format === 'parquet') assert.notEqual(bytes.subarray(bytes.length - 4).toString(), 'PAR1');
    }
  });

  test('a shutdown cuts the exports in flight; encoding goes on the request thread after it', async () => {
    const own = new ExportEncoders(1);
    const it = own.encode('parquet', FIELDS, source(100_000).src)[Symbol.asyncIterator]();
    await it.next();
    await own.close();
    await assert.rejects(async () => {
      for (;;) if ((await it.next()).done === true) break;
    }, /export encoding failed: its thread stopped/);
    const want = await collect(exportStream('ndjson', FIELDS, source(1_200).src));
    assert.ok((await collect(own.encode('ndjson', FIELDS, source(1_200).src))).equals(want));
  });
});
