/**
 * What a daily export's chunk costs the request thread, rows against columns (model/value-columns.ts):
 * per 1,000-row chunk, taking the reader process's message (v8 deserialize, as the IPC channel does)
 * and handing it to an encoding thread that writes Arrow. CPU of the main thread alone (Linux
 * /proc), alternating rounds; and the reader's side (serialize, with the columns made first).
 * `npx tsx bench/export-handover.ts`
 */
import fs from 'node:fs';
import v8 from 'node:v8';
import { CATALOG } from '../src/catalog/catalog.js';
import { ExportEncoders } from '../src/export/encoder-pool.js';
import { toColumns, type ValueColumns } from '../src/model/value-columns.js';
import type { Value } from '../src/model/values.js';
import { exportRow } from '../test/helpers/sample-rows.js';

const etf = CATALOG.byName.get('etf_daily');
if (!etf) throw new Error('no etf_daily');
const F = etf.rowFields;
function cpu(): number {
  const stat = fs.readFileSync(`/proc/self/task/${process.pid}/stat`, 'utf8');
  const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(f[11]) + Number(f[12])) / 100;
}
const N = 200_000;
const chunks: Value[][][] = [];
for (let at = 0; at < N; at += 1000)
  chunks.push(Array.from({ length: 1000 }, (_, k) => exportRow(F, at + k, 'x')));
const ipcRows = chunks.map((c) => v8.serialize(c));
const ipcCols = chunks.map((c) => v8.serialize(toColumns(c)));
const enc = new ExportEncoders(1);
async function run(kind: 'rows' | 'columns'): Promise<number> {
  const t = cpu();
  const src = {
    objects: () => {
      throw new Error('arrow reads arrays');
    },
    async *arrays() {
      for (let i = 0; i < chunks.length; i++) {
        // What the request thread does per chunk: take the reader's message, hand it on.
        const msg = (kind === 'rows' ? ipcRows : ipcCols)[i] as Buffer;
        yield v8.deserialize(msg) as Value[][] | ValueColumns;
      }
    },
  };
  for await (const _ of enc.encode('arrow', F, src)) void _;
  return cpu() - t;
}
await run('rows');
await run('columns');
for (let r = 0; r < 3; r++) {
  const a = await run('rows');
  const b = await run('columns');
  console.log(
    `request thread CPU for ${N} rows to arrow: rows ${a.toFixed(2)} s (${((a / N) * 1e6).toFixed(2)} us/row), columns ${b.toFixed(2)} s (${((b / N) * 1e6).toFixed(2)} us/row), ratio ${(b / a).toFixed(2)}`,
  );
}
let t = process.cpuUsage();
for (const c of chunks) v8.serialize(c);
const sr = process.cpuUsage(t);
t = process.cpuUsage();
for (const c of chunks) v8.serialize(toColumns(c));
const sc = process.cpuUsage(t);
console.log(
  `reader side (serialize): rows ${(sr.user + sr.system) / 1e6} s, toColumns+serialize ${(sc.user + sc.system) / 1e6} s`,
);
await enc.close();
