import assert from 'node:assert/strict';
import { test } from 'node:test';
import { deflateRawSync, inflateRawSync } from 'node:zlib';
import fc from 'fast-check';
import {
  BarVectors,
  COLUMNS,
  decodeBars,
  decodeBarsInto,
  encodeBarColumns,
  encodeBars,
  type BarColumns,
} from '../../src/model/bar-codec.js';

/**
 * The on-disk block of one code's day of bars (model/bar-codec.ts, docs/minute-bars.md): every
 * block ever written must decode to the bars it was written from, and a block written today must
 * still decode the same way after any change to the codec. Round trips over random columns
 * (prices at every scale, nulls in any pattern, values no power of ten makes whole, large
 * counts), a golden block whose bytes are fixed here, and damaged blocks that fail loudly.
 */

/** A column value as the codec must give it back: the same double, or null (NaN is null). */
const same = (a: number | null, b: number | null): boolean =>
  a === null || b === null ? a === b : Object.is(a, b) || (a === 0 && b === 0);

function assertSameBars(back: BarColumns, bars: BarColumns): void {
  assert.deepEqual(back.minutes, bars.minutes);
  assert.equal(back.columns.length, COLUMNS);
  for (let c = 0; c < COLUMNS; c++) {
    const want = bars.columns[c] as (number | null)[];
    const got = back.columns[c] as (number | null)[];
    assert.equal(got.length, want.length);
    for (let i = 0; i < want.length; i++) {
      assert.ok(
        same(got[i] as number | null, want[i] as number | null),
        `column ${c} bar ${i}: ${String(got[i])} for ${String(want[i])}`,
      );
    }
  }
}

/** A value of one of the shapes real columns hold, or null. */
const value = fc.oneof(
  { weight: 4, arbitrary: fc.integer({ min: 0, max: 99_999_999 }).map((n) => n / 1000) },
  { weight: 2, arbitrary: fc.integer({ min: 0, max: 2 ** 40 }) },
  { weight: 1, arbitrary: fc.double({ noNaN: true, noDefaultInfinity: true }) },
  { weight: 1, arbitrary: fc.integer({ min: -1_000_000, max: 1_000_000 }).map((n) => n / 100) },
  { weight: 1, arbitrary: fc.constant(null) },
);

/** A day's bars: strictly increasing end minutes, six columns of one length. */
const bars: fc.Arbitrary<BarColumns> = fc
  .uniqueArray(fc.integer({ min: 0, max: 1439 }), { maxLength: 300 })
  .chain((ms) => {
    const minutes = [...ms].sort((a, b) => a - b);
    return fc
      .array(fc.array(value, { minLength: minutes.length, maxLength: minutes.length }), {
        minLength: COLUMNS,
        maxLength: COLUMNS,
      })
      .map((columns) => ({ minutes, columns }));
  });

test('every day of bars decodes to the bars it was encoded from, by both decoders', () => {
  const vectors = new BarVectors();
  fc.assert(
    fc.property(bars, (b) => {
      const text = encodeBars(b);
      assertSameBars(decodeBars(text), b);
      // The read path's decoder, refilled block after block as reads use it.
      const v = decodeBarsInto(text, vectors);
      assert.equal(v.length, b.minutes.length);
      for (let c = 0; c < COLUMNS; c++) {
        for (let i = 0; i < v.length; i++) {
          const want = (b.columns[c] as (number | null)[])[i] as number | null;
          const present = (v.valid[c] as Uint8Array)[i] === 1;
          assert.equal(present, want !== null);
          if (want !== null) assert.ok(same((v.values[c] as Float64Array)[i] as number, want));
        }
      }
    }),
    { numRuns: 300 },
  );
});

test('the typed-column encoder writes the same block as the array encoder, in any order given', () => {
  fc.assert(
    fc.property(bars, fc.integer(), (b, seed) => {
      const n = b.minutes.length;
      // The columns as ingest holds them (shuffled arrival), with the order that sorts them.
      const perm = Array.from({ length: n }, (_, i) => i).sort(
        (x, y) => ((x * 7919 + seed) % 104729) - ((y * 7919 + seed) % 104729) || x - y,
      );
      const minutes = new Int32Array(n);
      const values = Array.from({ length: COLUMNS }, () => new Float64Array(n));
      perm.forEach((from, to) => {
        minutes[to] = b.minutes[from] as number;
        for (let c = 0; c < COLUMNS; c++) {
          (values[c] as Float64Array)[to] = (b.columns[c] as (number | null)[])[from] ?? NaN;
        }
      });
      const order = new Int32Array(n);
      perm.forEach((from, to) => (order[from] = to));
      assert.equal(encodeBarColumns(minutes, values, order), encodeBars(b));
    }),
    { numRuns: 200 },
  );
});

/**
 * Three bars written by the codec as it is: 09:31, 09:32 and 09:35 of a day; prices at three
 * decimals, a volume, an amount no power of ten up to 10^6 makes whole (kept as a float64), and a
 * column with one null. These bytes are what the database holds: a change that reads them
 * differently breaks every stored block.
 */
const GOLDEN: BarColumns = {
  minutes: [571, 572, 575],
  columns: [
    [3.901, 3.902, 3.9],
    [3.905, null, 3.91],
    [3.9, 3.899, 3.898],
    [3.902, 3.9, 3.909],
    [120_000, 98_500, 0],
    [468_120.123456789, 384_250.5, null],
  ],
};
const GOLDEN_RAW =
  '0103bb0401030003fa3c0203020503823d0a0003f83c01010003fc3c0312000080d30ef7cf0287830c0203' +
  'ffdd746b7e60921c4100000000ea731741';

test('a stored block decodes to its bars, byte for byte as written', () => {
  const text = encodeBars(GOLDEN);
  assert.equal(inflateRawSync(Buffer.from(text, 'base64')).toString('hex'), GOLDEN_RAW);
  assertSameBars(decodeBars(text), GOLDEN);
});

test('a damaged block fails loudly: unknown version, truncation, bad deflate', () => {
  const text = encodeBars(GOLDEN);
  const raw = inflateRawSync(Buffer.from(text, 'base64'));
  const rewrap = (b: Buffer): string => deflateRawSync(b).toString('base64');
  const badVersion = Buffer.from(raw);
  badVersion[0] = 2;
  assert.throws(() => decodeBars(rewrap(badVersion)), /unknown version/);
  for (const cut of [1, 2, 5, raw.length - 1]) {
    assert.throws(() => decodeBars(rewrap(raw.subarray(0, cut))), /truncated/, `cut at ${cut}`);
  }
  assert.throws(() => decodeBars('not a block'));
});
