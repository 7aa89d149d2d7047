import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { parquetMetadata, parquetReadObjects } from 'hyparquet';
import { tableFromIPC } from 'apache-arrow';
import { arrowStream } from '../../src/export/arrow-stream.js';
import { BATCH_ROWS } from '../../src/export/column-batch.js';
import { CATALOG } from '../../src/catalog/catalog.js';
import { parquetStream, ROW_GROUP_ROWS } from '../../src/export/parquet-stream.js';
import type { Value } from '../../src/model/values.js';
import { exportRow } from '../helpers/sample-rows.js';

/**
 * The Parquet writer (parquet-wasm) around its failure paths, which an HTTP test cannot pin down
 * (a compressed file fits in the sockets' buffers): the writer ignores a failing input and
 * closes the file as if complete, and it reads its input to the end even when its output is
 * cancelled. The stream must end with the source's own error and no footer, and stop reading
 * when its consumer stops. The file's values against the JSON answer, on both backends, with
 * pyarrow and DuckDB: columnar-formats.test.ts.
 */

const etf = CATALOG.byName.get('etf_daily');
assert.ok(etf);
const FIELDS = etf.rowFields;

const row = (i: number): Value[] => exportRow(FIELDS, i);

/** `total` rows in chunks of 1,000; throws `fail` once `failAt` rows were given; counts what was read. */
function source(total: number, fail?: { at: number; error: Error }) {
  const state = { read: 0, finished: false };
  async function* chunks(): AsyncGenerator<Value[][]> {
    try {
      for (let at = 0; at < total; at += 1000) {
        if (fail && at >= fail.at) throw fail.error;
        const rows = Array.from({ length: Math.min(1000, total - at) }, (_, k) => row(at + k));
        state.read += rows.length;
        yield rows;
      }
    } finally {
      state.finished = true;
    }
  }
  return { chunks: chunks(), state };
}

async function collect(stream: AsyncIterable<Uint8Array>): Promise<{ bytes: Uint8Array; error?: unknown }> {
  const parts: Uint8Array[] = [];
  try {
    for await (const p of stream) parts.push(p);
    return { bytes: Buffer.concat(parts) };
  } catch (error) {
    return { bytes: Buffer.concat(parts), error };
  }
}

const MAGIC = 'PAR1';
const endsWithFooter = (b: Uint8Array): boolean => Buffer.from(b.subarray(b.length - 4)).toString() === MAGIC;

describe('format=parquet writer (parquet-wasm), and the column batches both formats share', () => {
  test('a whole answer: every row, values as given, read by hyparquet', async () => {
    const total = ROW_GROUP_ROWS + 2_500; // two row groups, the last one short
    const { chunks } = source(total);
    const { bytes, error } = await collect(parquetStream(FIELDS, chunks));
    assert.equal(error, undefined);
    assert.ok(endsWithFooter(bytes));
    // Row groups of ROW_GROUP_ROWS, one Arrow batch each (their size is the export's RSS).
    const groups = parquetMetadata(new Uint8Array(bytes).buffer).row_groups.map((g) => Number(g.num_rows));
    assert.deepEqual(groups, [ROW_GROUP_ROWS, 2_500]);
    assert.equal(ROW_GROUP_ROWS, BATCH_ROWS);
    const rows = await parquetReadObjects({ file: new Uint8Array(bytes).buffer });
    assert.equal(rows.length, total);
    // Every row: the column batches are refilled in place (column-batch.ts), so a null after a
    // value in the same slot of the previous batch must still read as null.
    const open = FIELDS.findIndex((f) => f.apiName === 'open');
    const close = FIELDS.findIndex((f) => f.apiName === 'close');
    for (let i = 0; i < total; i++) {
      const want = row(i);
      const got = rows[i] as Record<string, unknown>;
      assert.equal(got.code, want[0], `row ${i}`);
      assert.equal((got.date as Date).toISOString().slice(0, 10), want[1], `row ${i}`);
      assert.equal(got.close, want[close], `row ${i}`);
      assert.equal(got.open, want[open], `row ${i}`);
    }
    assert.equal((rows[total - 1]?.updated_at as Date).toISOString(), '2026-01-02T03:04:05.678Z');
  });

  test('format=arrow from the same refilled batches: every row, nulls included', async () => {
    const total = 3 * 8_192 + 100;
    const { bytes, error } = await collect(arrowStream(FIELDS, source(total).chunks));
    assert.equal(error, undefined);
    const table = tableFromIPC(bytes);
    assert.equal(table.numRows, total);
    const open = FIELDS.findIndex((f) => f.apiName === 'open');
    const code = table.getChild('code');
    const opens = table.getChild('open');
    for (let i = 0; i < total; i++) {
      const want = row(i);
      assert.equal(code?.get(i), want[0], `row ${i}`);
      assert.equal(opens?.get(i), want[open], `row ${i}`);
    }
  });

  test('a source failing mid-answer: its own error, and no footer after the rows sent', async () => {
    const boom = new Error('the dataset changed');
    const { chunks } = source(3 * ROW_GROUP_ROWS, { at: ROW_GROUP_ROWS + 10_000, error: boom });
    const { bytes, error } = await collect(parquetStream(FIELDS, chunks));
    assert.equal(error, boom);
    assert.ok(bytes.length > 0, 'the first row group was sent');
    assert.ok(!endsWithFooter(bytes), 'a reader must not take the rows sent for a whole file');
    await assert.rejects(parquetReadObjects({ file: new Uint8Array(bytes).buffer }));
  });

  test('a source failing at once: its own error, nothing sent', async () => {
    const boom = new Error('database unavailable');
    const { chunks } = source(10_000, { at: 0, error: boom });
    const { bytes, error } = await collect(parquetStream(FIELDS, chunks));
    assert.equal(error, boom);
    assert.equal(bytes.length, 0);
  });

  test('a consumer that stops early stops the row reads (the writer would read its input to the end)', async () => {
    const total = 20 * ROW_GROUP_ROWS;
    const { chunks, state } = source(total);
    const it = parquetStream(FIELDS, chunks)[Symbol.asyncIterator]();
    const first = await it.next();
    assert.equal(first.done, false);
    await it.return(undefined);
    assert.ok(state.finished, "the source's finally ran");
    assert.ok(state.read < total / 2, `read ${state.read} of ${total} rows`);
    // The module is still usable after a cancelled writer.
    const again = await collect(parquetStream(FIELDS, source(5_000).chunks));
    assert.equal(again.error, undefined);
    assert.equal((await parquetReadObjects({ file: new Uint8Array(again.bytes).buffer })).length, 5_000);
  });
});
