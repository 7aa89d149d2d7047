// The raw-bytes JSON scanner (src/ingest/json-scan.ts) against JSON.parse on random documents:
// the byte span of `records` and of each element, key counts, repeated keys and underflows.
import { it } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { countKeys, findDuplicateKey, pathTo, scanBody } from '../../src/ingest/json-scan.js';

/** JSON text of `v` with whitespace from `ws` between tokens and strings escaped at random. */
function render(v: unknown, ws: () => string, esc: () => boolean): string {
  const str = (s: string): string => {
    const plain = JSON.stringify(s);
    // Escape every ASCII letter as \u00XX sometimes: the same string, other bytes.
    return esc() ? plain.replace(/[a-z]/g, (c) => `\\u00${c.charCodeAt(0).toString(16)}`) : plain;
  };
  if (v === null || typeof v !== 'object') return typeof v === 'string' ? str(v) : JSON.stringify(v);
  if (Array.isArray(v)) return `[${ws()}${v.map((e) => render(e, ws, esc)).join(`${ws()},${ws()}`)}${ws()}]`;
  const parts = Object.entries(v).map(([k, e]) => `${str(k)}${ws()}:${ws()}${render(e, ws, esc)}`);
  return `{${ws()}${parts.join(`${ws()},${ws()}`)}${ws()}}`;
}

const doc = fc.record({
  before: fc.dictionary(
    fc.string().filter((k) => k !== 'records'),
    fc.jsonValue(),
    { maxKeys: 3 },
  ),
  records: fc.array(fc.jsonValue({ maxDepth: 3 }), { maxLength: 6 }),
  after: fc.dictionary(
    fc.string().filter((k) => k !== 'records'),
    fc.jsonValue(),
    { maxKeys: 3 },
  ),
  spaces: fc.array(fc.constantFrom('', ' ', '\n', '\t ', '\r\n'), { minLength: 1 }),
  seed: fc.integer(),
});

function rendered(d: {
  before: Record<string, unknown>;
  records: unknown[];
  after: Record<string, unknown>;
  spaces: string[];
  seed: number;
}): { text: string; bytes: Buffer; value: Record<string, unknown> } {
  let n = d.seed;
  const next = (): number => (n = (n * 1103515245 + 12345) & 0x7fffffff);
  const ws = (): string => d.spaces[next() % d.spaces.length] as string;
  const esc = (): boolean => next() % 5 === 0;
  const members = [
    ...Object.entries(d.before).map(([k, v]) => `${JSON.stringify(k)}:${ws()}${render(v, ws, esc)}`),
    `${esc() ? '"rec\\u006frds"' : '"records"'}${ws()}:${ws()}${render(d.records, ws, esc)}`,
    ...Object.entries(d.after)
      .filter(([k]) => !(k in d.before))
      .map(([k, v]) => `${JSON.stringify(k)}:${ws()}${render(v, ws, esc)}`),
  ];
  const text = `${ws()}{${ws()}${members.join(`${ws()},${ws()}`)}${ws()}}${ws()}`;
  return { text, bytes: Buffer.from(text, 'utf8'), value: JSON.parse(text) as Record<string, unknown> };
}

it('finds the exact bytes of records and of each element, and counts keys as JSON.parse sees them', () => {
  fc.assert(
    fc.property(doc, (d) => {
      const { bytes, value } = rendered(d);
      const scan = scanBody(bytes);
      assert.ok(scan.records);
      const span = bytes.subarray(scan.records.start, scan.records.end).toString('utf8');
      assert.equal(span[0], '[');
      assert.equal(span[span.length - 1], ']');
      assert.deepEqual(JSON.parse(span), value.records);
      const records = value.records as unknown[];
      assert.equal(scan.elements.length, records.length);
      scan.elements.forEach((el, i) => {
        assert.deepEqual(JSON.parse(bytes.subarray(el.start, el.end).toString('utf8')), records[i]);
        assert.equal(el.keys, countKeys(records[i]));
      });
      const outside = countKeys(value) - records.reduce<number>((n, r) => n + countKeys(r), 0);
      assert.equal(scan.outerKeys, outside);
      assert.equal(findDuplicateKey(bytes, { start: 0, end: bytes.length }), null);
      assert.deepEqual(scan.underflows, []);
    }),
    { numRuns: 400 },
  );
});

it('a repeated key makes the text hold more keys than the parsed value, and is named', () => {
  fc.assert(
    fc.property(
      fc.uniqueArray(fc.string({ minLength: 1, maxLength: 4 }), { minLength: 1, maxLength: 5 }),
      fc.nat(),
      fc.nat(),
      (keys, pick, at) => {
        const dup = keys[pick % keys.length] as string;
        const all = [...keys];
        all.splice(at % (all.length + 1), 0, dup);
        const inner = `{${all.map((k, i) => `${JSON.stringify(k)}:${i}`).join(',')}}`;
        const text = `{"meta":{"a":1},"records":[{"data":${inner}},{"data":{}}]}`;
        const bytes = Buffer.from(text);
        const scan = scanBody(bytes);
        const parsed = JSON.parse(text) as { records: unknown[] };
        assert.equal(scan.elements[0]?.keys, countKeys(parsed.records[0]) + 1);
        assert.equal(scan.elements[1]?.keys, countKeys(parsed.records[1]));
        assert.deepEqual(findDuplicateKey(bytes, scan.elements[0] as { start: number; end: number }), [
          'data',
          dup,
        ]);
      },
    ),
    { numRuns: 300 },
  );
});

it('flags exactly the numbers with a non-zero digit that parse to 0, with their path', () => {
  const cases: [string, boolean][] = [
    ['1e-400', true],
    ['-2.5E-999', true],
    [`0.${'0'.repeat(400)}1`, true],
    ['5e-324', false],
    ['0e-5', false],
    ['-0.0', false],
    ['0', false],
    ['1e-300', false],
    ['123e-2', false],
    [`1${'0'.repeat(400)}e-400`, false],
  ];
  for (const [num, flagged] of cases) {
    const text = `{"records":[{"data":{"close":${num}}}],"meta":{"n":[${num}]}}`;
    const bytes = Buffer.from(text);
    const scan = scanBody(bytes);
    assert.equal(scan.underflows.length, flagged ? 2 : 0, num);
    if (!flagged) continue;
    const [inRecord, outside] = scan.underflows;
    assert.equal(inRecord?.element, 0);
    assert.equal(outside?.element, -1);
    assert.deepEqual(
      pathTo(bytes, scan.elements[0] as { start: number; end: number }, inRecord?.start ?? 0),
      ['data', 'close'],
    );
    assert.deepEqual(pathTo(bytes, { start: 0, end: bytes.length }, outside?.start ?? 0), [
      'meta',
      'n',
      '[]',
    ]);
  }
});
