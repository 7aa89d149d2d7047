import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { buildApp } from '../../src/app.js';
import { CATALOG } from '../../src/catalog/catalog.js';
import { Mirror, STATE_FILE } from '../../src/client/mirror.js';
import { createStore } from '../../src/storage/create-store.js';
import type { Store } from '../../src/storage/store.js';
import {
  ADMIN_TOKEN,
  QUERY_KEY,
  backends,
  freshDatabaseUrl,
  push,
  testConfig,
  type Json,
} from '../helpers/harness.js';
import { adjFactor, batch, etfBar } from '../helpers/batches.js';
import { ROOT } from '../helpers/repo-root.js';
import { pythonHas, runPython } from '../helpers/python.js';

const readers =
  pythonHas('duckdb', 'reading the mirror with DuckDB') &&
  pythonHas('polars', 'reading the mirror with polars');
import { Random } from '../../src/demo/random.js';

/** `mds mirror`: a local Parquet folder kept equal to the service through the change feed. */

/** Every file of a folder but the state, with its SHA-256. */
function contents(dir: string): Record<string, string> {
  const out: Record<string, string> = {};
  const walk = (d: string): void => {
    for (const e of fs.readdirSync(d, { withFileTypes: true })) {
      const p = path.join(d, e.name);
      if (e.isDirectory()) walk(p);
      else if (e.name !== STATE_FILE) {
        out[path.relative(dir, p)] = createHash('sha256').update(fs.readFileSync(p)).digest('hex');
      }
    }
  };
  if (fs.existsSync(dir)) walk(dir);
  return out;
}

for (const backend of await backends()) {
  describe(`mds mirror (${backend})`, () => {
    let app: FastifyInstance;
    let store: Store;
    let drop: () => Promise<void>;
    let base: string;
    let tmp: string;
    const pushed: string[] = [];

    const pushOk = async (body: Json): Promise<string> => {
      const res = await push(app, body);
      assert.equal(res.statusCode, 200, res.body);
      const id = (body.meta as Json).batch_id as string;
      pushed.push(id);
      return id;
    };
    const mirror = (dir: string, opts: { datasets?: string[]; codes?: string[] } = {}) =>
      new Mirror({ dir, key: QUERY_KEY, url: base, ...opts });

    before(async () => {
      const db = await freshDatabaseUrl(backend, { migrated: true });
      drop = db.drop;
      const config = testConfig(db.url);
      store = await createStore(config.DATABASE_URL, CATALOG, config);
      await store.migrate();
      app = await buildApp({ config, store });
      base = await app.listen({ port: 0, host: '127.0.0.1' });
      tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'mds-mirror-'));
    });
    after(async () => {
      await app?.close();
      await store?.close();
      await drop?.();
      fs.rmSync(tmp, { recursive: true, force: true });
    });

    test('first run exports by dataset and year; later runs apply batches, reverts and factors', async () => {
      await pushOk(
        batch('etf_daily', [
          etfBar('510300', '2023-12-29'),
          etfBar('510300', '2024-01-02'),
          etfBar('159915', '2024-01-02'),
        ]),
      );
      await pushOk(batch('adj_factor', [adjFactor('510300', '2023-12-29', 1)]));
      const dir = path.join(tmp, 'm1');
      const first = await mirror(dir, { datasets: ['etf_daily', 'adj_factor'] }).run();
      assert.equal(first.full, true);
      assert.deepEqual(Object.keys(contents(dir)).sort(), [
        'adj_factor/year=2023/part.parquet',
        'etf_daily/year=2023/part.parquet',
        'etf_daily/year=2024/part.parquet',
      ]);
      assert.deepEqual(await mirror(dir).verify(), []);

      // The seeded sequence: random batches, corrections, reverts and factor changes.
      const gen = new Random(backend === 'sqlite' ? 7 : 8);
      const rnd = (): number => gen.next();
      const codes = ['510300', '159915', '510500'];
      for (let i = 0; i < 50; i++) {
        const r = rnd();
        const code = codes[Math.floor(rnd() * codes.length)] as string;
        const year = 2022 + Math.floor(rnd() * 3);
        const date = `${year}-0${1 + Math.floor(rnd() * 9)}-1${Math.floor(rnd() * 9)}`;
        if (r < 0.15 && pushed.length > 0) {
          const id = pushed[Math.floor(rnd() * pushed.length)] as string;
          await app.inject({
            method: 'POST',
            url: `/admin/api/batches/${encodeURIComponent(id)}/revert`,
            headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
          });
        } else if (r < 0.3) {
          await pushOk(batch('adj_factor', [adjFactor(code, date, 1 + Math.round(rnd() * 100) / 100)]));
        } else {
          await pushOk(batch('etf_daily', [etfBar(code, date, { close: Math.round(rnd() * 1000) / 100 })]));
        }
        if (i % 10 === 9) await mirror(dir).run();
      }
      const last = await mirror(dir).run();
      assert.equal(last.full, false);
      assert.deepEqual(await mirror(dir).verify(), []);
      // Equal, file by file, to a folder exported now.
      const fresh = path.join(tmp, 'm1-fresh');
      await mirror(fresh, { datasets: ['etf_daily', 'adj_factor'] }).run();
      assert.deepEqual(contents(dir), contents(fresh));
    });

    test('DuckDB and polars read the folder as it is, partitioned by year', { skip: !readers }, async () => {
      const dir = path.join(tmp, 'm1');
      const total = Number(
        (
          (
            await app.inject({ url: '/api/v1/etf/kline?limit=1', headers: { 'q-api-key': QUERY_KEY } })
          ).json() as { meta: Json }
        ).meta.total,
      );
      const out = await runPython([
        '-c',
        `import sys, duckdb, polars as pl
glob = sys.argv[1] + "/etf_daily/*/*.parquet"
d = duckdb.sql(f"SELECT count(*), count(DISTINCT year) FROM read_parquet('{glob}', hive_partitioning = true)").fetchone()
p = pl.scan_parquet(glob, hive_partitioning=True).select(pl.len()).collect().item()
print(d[0], d[1], p)`,
        dir,
      ]);
      const [duck, years, polars] = out.trim().split(' ').map(Number);
      assert.equal(duck, total);
      assert.equal(polars, total);
      assert.equal(years, fs.readdirSync(path.join(dir, 'etf_daily')).length);
    });

    test('only some codes; verify names a partition that differs', async () => {
      const dir = path.join(tmp, 'm2');
      await mirror(dir, { datasets: ['etf_daily'], codes: ['159915'] }).run();
      await pushOk(batch('etf_daily', [etfBar('159915', '2024-01-02', { close: 1.23 })]));
      await pushOk(batch('etf_daily', [etfBar('510300', '2021-06-01')]));
      await mirror(dir).run();
      // 510300's new year is not mirrored: no year=2021.
      assert.ok(!fs.existsSync(path.join(dir, 'etf_daily', 'year=2021')));
      assert.deepEqual(await mirror(dir).verify(), []);
      const file = Object.keys(contents(dir))[0] as string;
      fs.appendFileSync(path.join(dir, file), 'x');
      assert.deepEqual(await mirror(dir).verify(), [`${path.dirname(file)}: differs`]);
    });

    test('killed mid-apply, the next run ends equal', async () => {
      const dir = path.join(tmp, 'm3');
      await mirror(dir, { datasets: ['etf_daily', 'adj_factor'] }).run();
      for (let y = 2010; y < 2020; y++) await pushOk(batch('etf_daily', [etfBar('510300', `${y}-03-01`)]));
      const state = fs.readFileSync(path.join(dir, STATE_FILE), 'utf8');
      // The CLI, killed once it has written its first partition (before its state).
      const child = spawn(
        process.execPath,
        ['--import', 'tsx', 'src/cli/main.ts', 'mirror', dir, '--url', base, '--key', QUERY_KEY],
        { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] },
      );
      let err = '';
      await new Promise<void>((resolve) => {
        child.stderr.on('data', (b: Buffer) => {
          err += b.toString();
          if (err.includes('bytes')) child.kill('SIGKILL');
        });
        child.once('exit', () => resolve());
      });
      assert.match(err, /year=\d{4}: \d+ bytes/);
      assert.equal(fs.readFileSync(path.join(dir, STATE_FILE), 'utf8'), state, 'the state is the old one');
      const cli = spawn(
        process.execPath,
        ['--import', 'tsx', 'src/cli/main.ts', 'mirror', dir, '--url', base, '--key', QUERY_KEY],
        { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] },
      );
      let out = '';
      cli.stdout.on('data', (b: Buffer) => (out += b.toString()));
      const code = await new Promise((r) => cli.once('exit', r));
      assert.equal(code, 0);
      assert.match(out, /10 change\(s\) applied; equal to the service at event \d+/);
      assert.deepEqual(await mirror(dir).verify(), []);
    });
  });
}
