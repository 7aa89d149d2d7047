import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { CATALOG, type Dataset, type Field } from '../../src/catalog/catalog.js';
import { buildBatch, toRecord, type RowData } from '../../src/client/batch-builder.js';
import { backends, get, json, push, startApp, type Harness } from '../helpers/harness.js';
import { pythonHas, runPython } from '../helpers/python.js';
import { seedDemoStore } from '../helpers/demo-seed.js';
import { ROOT } from '../helpers/repo-root.js';

/**
 * Issue 18: format=arrow and format=parquet on every query endpoint, read by readers we did not
 * write (pyarrow; DuckDB too for Parquet when installed) and compared with the JSON answer,
 * value for value and bit for bit for doubles, on every backend.
 */

const READER = path.join(ROOT, 'test', 'helpers', 'read_columnar.py');
const haveReader = pythonHas('pyarrow', 'the Arrow/Parquet independent-reader tests are');
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'mds-columnar-'));
after(() => fs.rmSync(tmp, { recursive: true, force: true }));

type Cell = string | number | null;
interface Read {
  schema: [string, string, boolean][];
  rows: Cell[][];
  duckdb?: { columns: string[]; rows: Cell[][] } | null;
}

/** Doubles that lose bits if anything on the way prints and re-parses them carelessly. */
const TRICKY = [0.1 + 0.2, 1 / 3, 5e-324, 2 ** 43 + 0.1, -2.2250738585072014e-308, Math.PI * 1e8];

function hex(n: number): string {
  const b = Buffer.alloc(8);
  b.writeDoubleBE(n);
  return `f:${b.toString('hex')}`;
}

/**
 * A JSON answer's value in the form the reader prints: doubles as their bits, timestamps as the
 * UTC instant (the JSON answer keeps an exchange's offset, e.g. a minute bar's time at +08:00;
 * the columnar column is the same instant in UTC: docs/columnar.md).
 */
function cell(f: Field, v: unknown): Cell {
  if (v === null || v === undefined) return null;
  if (f.type === 'number') return hex(v as number);
  if (f.type === 'timestamp') return new Date(v as string).toISOString();
  return v as Cell;
}

async function jsonRows(h: Harness, d: Dataset, query: string, fields: readonly Field[]): Promise<Cell[][]> {
  const out: Cell[][] = [];
  let cursor: string | null = null;
  do {
    const url = `${d.endpoint}?limit=1000${query}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`;
    const body = json(await get(h.app, url)) as {
      data: Record<string, unknown>[];
      meta: { next_cursor: string | null };
    };
    for (const r of body.data) out.push(fields.map((f) => cell(f, r[f.apiName])));
    cursor = body.meta.next_cursor;
  } while (cursor);
  return out;
}

/** Downloads each answer to a file, then reads them all in one Python process (start-up is slow). */
async function readAll(h: Harness, urls: string[]): Promise<Read[]> {
  const args: string[] = [];
  for (const url of urls) {
    const format = url.includes('format=arrow') ? 'arrow' : 'parquet';
    const res = await get(h.app, url);
    assert.equal(res.statusCode, 200, `${url}: ${res.body.slice(0, 300)}`);
    assert.equal(
      res.headers['content-type'],
      format === 'arrow' ? 'application/vnd.apache.arrow.stream' : 'application/vnd.apache.parquet',
    );
    const file = path.join(tmp, `${h.backend}-${args.length}.${format}`);
    fs.writeFileSync(file, res.rawPayload);
    args.push(format, file);
  }
  const out = JSON.parse(await runPython([READER, ...args])) as Record<string, Read>;
  return args.filter((_, i) => i % 2 === 1).map((file) => out[file] as Read);
}

const FORMATS = ['arrow', 'parquet'] as const;

const ARROW_TYPE = {
  string: 'string',
  number: 'double',
  integer: 'int64',
  flag: 'int8',
  date: 'date32[day]',
  timestamp: 'timestamp[ms, tz=UTC]',
} as const;

for (const backend of await backends()) {
  describe(`format=arrow|parquet (${backend})`, { skip: !haveReader }, () => {
    let h: Harness;
    before(async () => {
      h = await startApp(backend);
      for (const r of await seedDemoStore(h.store, { end: '2025-06-30', days: 22, seed: 5 })) {
        assert.equal(r.rejected, 0, r.dataset);
      }
      // Tricky doubles, absent optional fields and non-ASCII text, next to the demo rows.
      const kline = CATALOG.byName.get('etf_daily') as Dataset;
      const rows: RowData[] = TRICKY.map((x, i) => ({
        symbol: '999999',
        date: `2025-06-${String(10 + i).padStart(2, '0')}`,
        close: x,
        volume: i === 0 ? 0 : 1e15 + i,
        source: 'édition-测试',
        updated_at: '2025-06-30T08:00:00.123Z',
        open: i % 2 === 0 ? null : -x,
      }));
      const batch = buildBatch(
        kline,
        rows.map((r) => toRecord(kline, r)),
        {
          source: 'édition-测试',
          businessDate: '2025-06-15',
          snapshotType: 'incremental',
          runId: 'columnar-test',
        },
      );
      const pushed = await push(h.app, batch);
      assert.equal(pushed.statusCode, 200, pushed.body);
    });
    after(() => h?.close());

    test('every endpoint: arrow and parquet equal the JSON answer', async () => {
      const read = await readAll(
        h,
        CATALOG.datasets.flatMap((d) => FORMATS.map((f) => `${d.endpoint}?format=${f}`)),
      );
      for (const [i, d] of CATALOG.datasets.entries()) {
        const expected = await jsonRows(h, d, '', d.rowFields);
        assert.ok(expected.length > 0, `the demo seed has rows in ${d.name}`);
        for (const [j, format] of FORMATS.entries()) {
          const got = read[i * 2 + j] as Read;
          assert.deepEqual(
            got.schema,
            d.rowFields.map((f) => [f.apiName, ARROW_TYPE[f.type], !f.required && !f.serverSet]),
            `${d.endpoint} ${format} schema`,
          );
          assert.deepEqual(got.rows, expected, `${d.endpoint} ${format} rows`);
          if (got.duckdb) {
            assert.deepEqual(
              got.duckdb.columns,
              d.rowFields.map((f) => f.apiName),
            );
            assert.deepEqual(got.duckdb.rows, expected, `${d.endpoint}: DuckDB reads the same rows`);
          }
        }
      }
    });

    test('doubles are the stored doubles bit for bit; fields= and filters honoured', async () => {
      const d = CATALOG.byName.get('etf_daily') as Dataset;
      const fields = ['date', 'close', 'open', 'volume', 'source'].map(
        (n) => d.fieldByApiName.get(n) as Field,
      );
      const q = '&code=999999&fields=date,close,open,volume,source&sort=date&order=asc';
      const expected = await jsonRows(h, d, q, fields);
      assert.deepEqual(
        expected.map((r) => r[1]),
        TRICKY.map(hex),
      );
      const read = await readAll(
        h,
        FORMATS.map((f) => `${d.endpoint}?format=${f}${q}`),
      );
      for (const [j, format] of FORMATS.entries()) {
        const got = read[j] as Read;
        assert.deepEqual(
          got.schema.map((s) => s[0]),
          ['date', 'close', 'open', 'volume', 'source'],
        );
        assert.deepEqual(got.rows, expected, format);
      }
    });

    test('an empty result is a valid file with the columns and no rows', async () => {
      const read = await readAll(
        h,
        FORMATS.map((f) => `/api/v1/etf/kline?format=${f}&code=000000&fields=code,close`),
      );
      for (const got of read) {
        assert.deepEqual(got.schema, [
          ['code', 'string', false],
          ['close', 'double', false],
        ]);
        assert.deepEqual(got.rows, []);
      }
    });
  });
}

test('format= lists the columnar formats; /openapi.json names their media types', async () => {
  const h = await startApp('sqlite');
  try {
    const bad = json(await get(h.app, '/api/v1/etf/kline?format=xlsx'));
    assert.equal(bad.code, 4001);
    assert.match(String(bad.message), /json, csv, ndjson, arrow, parquet/);
    const doc = json(await get(h.app, '/openapi.json', null)) as {
      paths: Record<string, { get: { 'x-mds-exports': Record<string, string> } }>;
    };
    const exportsOf = doc.paths['/api/v1/etf/kline']?.get['x-mds-exports'] ?? {};
    assert.equal(exportsOf.arrow, 'application/vnd.apache.arrow.stream', 'arrow in /openapi.json');
    assert.equal(exportsOf.parquet, 'application/vnd.apache.parquet', 'parquet in /openapi.json');
  } finally {
    await h.close();
  }
});
