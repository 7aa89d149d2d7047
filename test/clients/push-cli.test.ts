import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { parse } from 'csv-parse/sync';
import { INGEST_KEY, QUERY_KEY, backends, startApp, type Harness } from '../helpers/harness.js';
import { CLI_MAIN } from '../helpers/built.js';

/** `mds push` as a user runs it: a real process against a real listening server. */

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

function mds(args: string[], env: Record<string, string> = {}): Promise<Run> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [CLI_MAIN, ...args],
      { cwd: process.cwd(), env: { ...process.env, MDS_PUSH_KEY: '', UP_API_KEY: '', ...env } },
      (err, stdout, stderr) => {
        const code = err ? (typeof err.code === 'number' ? err.code : 1) : 0;
        resolve({ code, stdout, stderr });
      },
    );
  });
}

/** Push args of an etf_daily CSV without symbol or updated_at columns (both required). */
const etfPushArgs = (csv: string, symbol: string): string[] => [
  ...['push', '--dataset', 'etf_daily', csv, '--set', `symbol=${symbol}`],
  ...['--set', 'updated_at=2024-01-02T00:00:00Z', '--source', 'eastmoney'],
];

/** A CSV like a vendor's download: no symbol column, YYYYMMDD dates, an empty cell. */
function priceCsv(rows: number): { text: string; closes: number[] } {
  const lines = ['date,open,high,low,close,volume'];
  const closes: number[] = [];
  let t = Date.parse('2019-01-01T00:00:00Z');
  let price = 3.5;
  for (let i = 0; i < rows; i++) {
    const d = new Date(t).toISOString().slice(0, 10).replace(/-/g, '');
    price = Math.round(price * (1 + Math.sin(i) * 0.01) * 1000) / 1000;
    closes.push(price);
    const open = i === 5 ? '' : String(price);
    lines.push(`${d},${open},${price + 0.02},${price - 0.02},${price},${1000 + i}`);
    t += 86_400_000;
  }
  return { text: `${lines.join('\n')}\n`, closes };
}

for (const backend of await backends()) {
  describe(`mds push (${backend})`, () => {
    let h: Harness;
    let base: string;
    let dir: string;
    const file = (name: string, text: string): string => {
      const p = path.join(dir, name);
      fs.writeFileSync(p, text);
      return p;
    };
    const exportCsv = async (query: string): Promise<Record<string, string>[]> => {
      const res = await fetch(`${base}${query}`, { headers: { 'q-api-key': QUERY_KEY } });
      assert.equal(res.status, 200);
      return parse(await res.text(), { columns: true }) as Record<string, string>[];
    };

    before(async () => {
      h = await startApp(backend);
      base = await h.app.listen({ port: 0, host: '127.0.0.1' });
      dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mds-push-'));
    });
    after(async () => {
      await h?.close();
      fs.rmSync(dir, { recursive: true, force: true });
    });

    test('push a CSV, export it with format=csv: the same rows; a re-run is a duplicate', async () => {
      const { text } = priceCsv(1200);
      const csv = file('510300.csv', text);
      const args = etfPushArgs(csv, '510300');
      const first = await mds([...args, '--batch-size', '500', '--url', base, '--key', INGEST_KEY]);
      assert.equal(first.code, 0, first.stderr);
      assert.equal(first.stdout.match(/\taccepted\t/g)?.length, 3, first.stdout);
      assert.match(
        first.stdout,
        /total: 3 batch\(es\), 1200 records: accepted 1200, duplicate 0, rejected 0/,
      );
      assert.match(first.stderr, /\[3\/3\]/, 'progress on stderr');

      const exported = await exportCsv(
        '/api/v1/etf/kline?code=510300&format=csv&fields=date,open,high,low,close,volume&sort=date&order=asc',
      );
      const input = parse(text, { columns: true }) as Record<string, string>[];
      assert.equal(exported.length, input.length);
      input.forEach((r, i) => {
        const e = exported[i] as Record<string, string>;
        assert.equal(e.date, `${r.date?.slice(0, 4)}-${r.date?.slice(4, 6)}-${r.date?.slice(6)}`);
        for (const c of ['open', 'high', 'low', 'close', 'volume']) {
          assert.equal(
            e[c] === '' ? null : Number(e[c]),
            r[c] === '' ? null : Number(r[c]),
            `${c} of row ${i}`,
          );
        }
      });

      // The key from the environment; same content → same batch ids → "duplicate".
      const again = await mds([...args, '--batch-size', '500', '--url', base], { MDS_PUSH_KEY: INGEST_KEY });
      assert.equal(again.code, 0, again.stderr);
      assert.equal(again.stdout.match(/\tduplicate\t/g)?.length, 3, again.stdout);
      assert.match(again.stdout, /accepted 0, duplicate 1200, rejected 0/);
    });

    test('a plain OHLCV file without updated_at: filled with the push time, and said', async () => {
      const csv = file('plain.csv', 'date,open,high,low,close,volume\n20240102,3.5,3.6,3.4,3.55,1000\n');
      const before = new Date().toISOString();
      const args = ['push', '--dataset', 'etf_daily', csv, '--set', 'symbol=588001', '--source', 'plain'];
      const run = await mds([...args, '--url', base, '--key', INGEST_KEY]);
      assert.equal(run.code, 0, run.stderr);
      assert.match(
        run.stderr,
        /note: updated_at absent on 1 of 1 rows: set to the push time \d{4}-\d{2}-\d{2}T/,
      );
      const [row] = await exportCsv('/api/v1/etf/kline?code=588001&format=csv');
      assert.ok(row && String(row.updated_at) >= before, `updated_at ${String(row?.updated_at)}`);

      // Run again: another push time in updated_at, the same prices: all duplicates, the row
      // (and its updated_at) as it was — no false change for a cache, an ETag or a change feed.
      await new Promise((r) => setTimeout(r, 5));
      const again = await mds([...args, '--url', base, '--key', INGEST_KEY]);
      assert.equal(again.code, 0, again.stderr);
      assert.match(again.stdout, /accepted 0, duplicate 1, rejected 0/);
      const [after] = await exportCsv('/api/v1/etf/kline?code=588001&format=csv');
      assert.equal(after?.updated_at, row.updated_at);
    });

    test('--lots-to-shares: a volume in lots of 100 is stored in shares, the unit the catalog says', async () => {
      const csv = file('lots.csv', 'date,close,volume\n20240102,3.55,12\n20240103,3.56,7.5\n');
      const args = ['push', '--dataset', 'etf_daily', csv, '--set', 'symbol=588002', '--source', 'lots'];
      const run = await mds([...args, '--lots-to-shares', '--url', base, '--key', INGEST_KEY]);
      assert.equal(run.code, 0, run.stderr);
      assert.match(run.stderr, /note: volume given in lots: multiplied by 100 \(shares\)/);
      const rows = await exportCsv('/api/v1/etf/kline?code=588002&format=csv&sort=date&order=asc');
      assert.deepEqual(
        rows.map((r) => Number(r.volume)),
        [1200, 750],
      );
      const cal = file('cal.csv', 'exchange,date,is_open,source\nSSE,20240102,1,sse\n');
      const us = await mds(['push', '--dataset', 'trade_calendar', cal, '--lots-to-shares', '--dry-run']);
      assert.equal(us.code, 1);
      assert.match(us.stderr, /--lots-to-shares: dataset trade_calendar has no field in shares/);
    });

    test('volumes that look like lots are said (amount / (volume × close) ≈ 100), in either direction', async () => {
      // Eastmoney-style daily bars: volume in lots, amount in yuan (10 lots at 3.5 = 3,500 yuan).
      const lots = file(
        'em-lots.csv',
        'date,close,volume,amount\n20240102,3.5,10,3520\n20240103,3.6,20,7150\n',
      );
      const args = ['push', '--dataset', 'etf_daily', lots, '--set', 'symbol=588003', '--source', 'em'];
      const warned = await mds([...args, '--dry-run']);
      assert.equal(warned.code, 0, warned.stderr);
      assert.match(
        warned.stderr,
        /warning: volume looks like lots of 100, not shares: the median of amount \/ \(volume × close\) over 2 rows is 101 \(about 1 in shares\)\. Push with --lots-to-shares/,
      );
      const converted = await mds([...args, '--lots-to-shares', '--url', base, '--key', INGEST_KEY]);
      assert.equal(converted.code, 0, converted.stderr);
      assert.doesNotMatch(converted.stderr, /warning/);
      const rows = await exportCsv('/api/v1/etf/kline?code=588003&format=csv&sort=date&order=asc');
      assert.deepEqual(
        rows.map((r) => Number(r.volume)),
        [1000, 2000],
      );
      // Shares already: converting them is said too; shares as they are say nothing.
      const shares = file('em-shares.csv', 'date,close,volume,amount\n20240102,3.5,1000,3520\n');
      const sharesArgs = [
        'push',
        '--dataset',
        'etf_daily',
        shares,
        '--set',
        'symbol=588004',
        '--source',
        'em',
        '--dry-run',
      ];
      const twice = await mds([...sharesArgs, '--lots-to-shares']);
      assert.match(
        twice.stderr,
        /warning: volume looks like shares already: after --lots-to-shares .* is 0\.0101/,
      );
      const plain = await mds(sharesArgs);
      assert.equal(plain.code, 0, plain.stderr);
      assert.doesNotMatch(plain.stderr, /warning/);
    });

    test('--concurrency: several batches in flight, reported in file order', async () => {
      const csv = file('510301.csv', priceCsv(1200).text);
      const args = etfPushArgs(csv, '510301');
      const planned = await mds([...args, '--batch-size', '300', '--dry-run', '--key', INGEST_KEY]);
      const ids = planned.stdout
        .split('\n')
        .filter((l) => l.includes('\tdry run'))
        .map((l) => l.split('\t')[0]);
      assert.equal(ids.length, 4, planned.stdout);
      const run = await mds([
        ...args,
        '--batch-size',
        '300',
        '--concurrency',
        '3',
        '--url',
        base,
        '--key',
        INGEST_KEY,
      ]);
      assert.equal(run.code, 0, run.stderr);
      const lines = run.stdout.split('\n').filter((l) => /\tHTTP \d+\t/.test(l));
      assert.deepEqual(
        lines.map((l) => l.split('\t')[0]),
        ids,
      );
      assert.ok(
        lines.every((l) => l.includes('\taccepted\t')),
        run.stdout,
      );
      const bad = await mds([...args, '--concurrency', '0', '--url', base, '--key', INGEST_KEY]);
      assert.equal(bad.code, 1);
      assert.match(bad.stderr, /--concurrency must be a positive integer/);
    });

    test('a key in two batches: pushed one at a time, so the later row wins', async () => {
      const { text } = priceCsv(600);
      // The first day again at the end, corrected: batch 1 and batch 3 hold the same key.
      const csv = file('510302.csv', `${text}20190101,1,1,1,7.77,1\n`);
      const args = etfPushArgs(csv, '510302');
      const run = await mds([
        ...args,
        '--batch-size',
        '300',
        '--concurrency',
        '4',
        '--url',
        base,
        '--key',
        INGEST_KEY,
      ]);
      assert.equal(run.code, 0, run.stderr);
      assert.match(run.stderr, /one batch at a time: key .*2019-01-01.* is in batches 1 and 3/);
      const [row] = await exportCsv('/api/v1/etf/kline?code=510302&date=2019-01-01&format=csv&fields=close');
      assert.equal(row?.close, '7.77');
    });

    test('an exported file pushes back as-is (row names, created_at ignored)', async () => {
      const res = await fetch(`${base}/api/v1/etf/kline?code=510300&format=csv&date_to=2019-01-31`, {
        headers: { 'q-api-key': QUERY_KEY },
      });
      const csv = file('export.csv', await res.text());
      const r = await mds(['push', '--dataset', 'etf_daily', csv, '--url', base, '--key', INGEST_KEY]);
      assert.equal(r.code, 0, r.stderr + r.stdout);
      assert.match(r.stderr, /ignoring column\(s\) set by the server: created_at/);
      assert.match(r.stdout, /accepted 0, duplicate 31, rejected 0/);
    });

    test('NDJSON and JSON files', async () => {
      const nd = file(
        'fx.ndjson',
        [
          { symbol: 'USDCNY', date: '2024-01-02', close: 7.1 },
          { symbol: 'USDCNY', date: '2024-01-03', close: '7.12' },
        ]
          .map((r) => JSON.stringify(r))
          .join('\n'),
      );
      const a = await mds([
        'push',
        '--dataset',
        'fx',
        nd,
        '--source',
        'boc',
        '--url',
        base,
        '--key',
        INGEST_KEY,
      ]);
      assert.equal(a.code, 0, a.stderr);
      assert.match(a.stdout, /accepted 2, duplicate 0, rejected 0/);
      const js = file(
        'basic.json',
        JSON.stringify([{ code: '510300', name: '沪深300ETF', exchange: 'SH', is_connected: true }]),
      );
      const b = await mds(['push', '--dataset', 'etf_basic', js, '--url', base, '--key', INGEST_KEY]);
      assert.equal(b.code, 0, b.stderr);
      const rows = await exportCsv('/api/v1/etf/basic?format=csv&fields=code,name,is_connected');
      assert.deepEqual(rows, [{ code: '510300', name: '沪深300ETF', is_connected: '1' }]);
    });

    test('--set and --row-number fill key fields a filing extract lacks (13F line numbers)', async () => {
      const csv = file(
        '13f.csv',
        'name_of_issuer,cusip,value,ssh_prnamt\n3M CO,88579Y101,409469,2334\nABBOTT LABS,002824100,470615,3983\n',
      );
      const r = await mds([
        'push',
        '--dataset',
        'us_13f_holdings',
        csv,
        '--set',
        'accession_number=0001067983-24-000001',
        '--set',
        'filer_cik=0001067983',
        '--set',
        'period_of_report=20231231',
        '--row-number',
        'line_no',
        '--map',
        'name_of_issuer=issuer_name',
        '--map',
        'value=value_usd',
        '--map',
        'ssh_prnamt=shares',
        '--url',
        base,
        '--key',
        INGEST_KEY,
      ]);
      assert.equal(r.code, 0, r.stderr + r.stdout);
      const rows = await exportCsv(
        '/api/v1/us/13f-holdings?format=csv&fields=line_no,issuer_name,shares&sort=line_no',
      );
      assert.deepEqual(rows, [
        { line_no: '1', issuer_name: '3M CO', shares: '2334' },
        { line_no: '2', issuer_name: 'ABBOTT LABS', shares: '3983' },
      ]);
    });

    test('clear errors: unknown column, missing field, bad cell, no key, split snapshot', async () => {
      const csv = file('bad.csv', 'date,close,volume,colour\n2024-01-02,1,2,red\n');
      const unknown = await mds([
        'push',
        '--dataset',
        'etf_daily',
        csv,
        '--set',
        'symbol=1',
        '--source',
        's',
        '--url',
        base,
        '--key',
        INGEST_KEY,
      ]);
      assert.equal(unknown.code, 1);
      assert.match(unknown.stderr, /unknown column\(s\) for dataset etf_daily: colour/);
      assert.match(unknown.stderr, /--map column=field/);

      const missing = await mds([
        'push',
        '--dataset',
        'etf_daily',
        csv,
        '--ignore',
        'colour',
        '--url',
        base,
        '--key',
        INGEST_KEY,
      ]);
      assert.equal(missing.code, 1);
      assert.match(
        missing.stderr,
        /missing required field\(s\) for dataset etf_daily: symbol \(or code\), source/,
      );

      const cell = file(
        'cell.csv',
        'code,date,close,volume,updated_at\n510300,2024-01-02,abc,2,2024-01-02T00:00:00Z\n',
      );
      const bad = await mds([
        'push',
        '--dataset',
        'etf_daily',
        cell,
        '--source',
        's',
        '--url',
        base,
        '--key',
        INGEST_KEY,
      ]);
      assert.equal(bad.code, 1);
      assert.match(bad.stderr, /cell\.csv line 2, column "close": close must be a number \(got "abc"\)/);

      const nokey = await mds(['push', '--dataset', 'etf_daily', cell, '--source', 's', '--url', base]);
      assert.equal(nokey.code, 1);
      assert.match(nokey.stderr, /no ingest key/);

      const split = await mds([
        'push',
        '--dataset',
        'etf_daily',
        cell,
        '--full-snapshot',
        '--batch-size',
        '10',
        '--url',
        base,
        '--key',
        INGEST_KEY,
      ]);
      assert.equal(split.code, 1);
      assert.match(split.stderr, /cannot split a full snapshot/);
    });

    test('rejected records are listed with their file line; exit code 2', async () => {
      const csv = file('basic.csv', 'code,name,exchange\n510500,中证500ETF,SH\n159915,创业板ETF,XX\n');
      const r = await mds(['push', '--dataset', 'etf_basic', csv, '--url', base, '--key', INGEST_KEY]);
      assert.equal(r.code, 2, r.stderr);
      assert.match(r.stdout, /HTTP 207\tpartial/);
      assert.match(
        r.stdout,
        /rejected: basic\.csv line 3 \(etf_basic:159915\) field exchange: must be one of SH, SZ/,
      );
    });

    test('a full snapshot replaces its partition', async () => {
      const day = (rows: string[]) => file('snap.csv', `code,date,close,volume\n${rows.join('\n')}\n`);
      const args = [
        'push',
        '--dataset',
        'etf_daily',
        '--full-snapshot',
        '--set',
        'updated_at=2024-03-01T00:00:00Z',
        '--source',
        'snap',
        '--url',
        base,
        '--key',
        INGEST_KEY,
      ];
      const a = await mds([...args, day(['A,2024-03-01,1,1', 'B,2024-03-01,1,1', 'C,2024-03-01,1,1'])]);
      assert.equal(a.code, 0, a.stderr);
      const b = await mds([...args, day(['A,2024-03-01,1,1', 'C,2024-03-01,2,1'])]);
      assert.equal(b.code, 0, b.stderr);
      assert.match(b.stdout, /accepted 1, duplicate 1, rejected 0, pruned 1/);
      const rows = await exportCsv('/api/v1/etf/kline?source=snap&format=csv&fields=code,close&sort=code');
      assert.deepEqual(rows, [
        { code: 'A', close: '1' },
        { code: 'C', close: '2' },
      ]);
      const mixed = await mds([...args, day(['A,2024-03-01,1,1', 'A,2024-03-04,1,1'])]);
      assert.equal(mixed.code, 1);
      assert.match(mixed.stderr, /full snapshot replaces one partition/);
    });

    test('retries a 503 (Retry-After) and pushes once', async () => {
      let failures = 1;
      const proxy = http.createServer((req, res) => {
        const chunks: Buffer[] = [];
        req.on('data', (c: Buffer) => chunks.push(c));
        req.on('end', () => {
          if (req.method === 'POST' && failures-- > 0) {
            res.writeHead(503, { 'content-type': 'application/json', 'retry-after': '0' });
            res.end(JSON.stringify({ code: 5030, message: 'busy' }));
            return;
          }
          void fetch(`${base}${req.url ?? '/'}`, {
            method: req.method ?? 'GET',
            headers: { 'content-type': 'application/json', 'up-api-key': String(req.headers['up-api-key']) },
            ...(req.method === 'POST' ? { body: Buffer.concat(chunks) } : {}),
          }).then(async (r) => {
            res.writeHead(r.status, { 'content-type': 'application/json' });
            res.end(await r.text());
          });
        });
      });
      await new Promise<void>((r) => proxy.listen(0, '127.0.0.1', r));
      const port = (proxy.address() as { port: number }).port;
      try {
        const csv = file('retry.csv', 'code,date,close,volume\n588000,2024-01-02,1,2\n');
        const r = await mds([
          'push',
          '--dataset',
          'etf_daily',
          csv,
          '--set',
          'updated_at=2024-01-02T00:00:00Z',
          '--source',
          'r',
          '--url',
          `http://127.0.0.1:${port}`,
          '--key',
          INGEST_KEY,
        ]);
        assert.equal(r.code, 0, r.stderr);
        assert.match(r.stderr, /HTTP 503 code 5030; retry 1/);
        assert.match(r.stdout, /\taccepted\taccepted 1/);
      } finally {
        proxy.close();
      }
    });
  });
}
