// The catalog refuses a declaration whose factor series or calendar names the wrong fields:
// the checks run at boot, so a wrong declaration never serves (docs/architecture.md).
import { it } from 'node:test';
import assert from 'node:assert/strict';
import { compileDataset, DECLARATIONS } from '../../src/catalog/catalog.js';
import type { DatasetDeclaration } from '../../src/catalog/types.js';

const declared = (name: string): DatasetDeclaration =>
  DECLARATIONS.find((d) => d.name === name) ?? assert.fail(`no ${name}`);

it('every declaration with a factor series or a calendar compiles, its roles read as fields', () => {
  const factors = compileDataset(declared('adj_factor')).factors;
  assert.deepEqual(
    [factors?.code.name, factors?.date.name, factors?.value.name],
    ['symbol', 'date', 'adj_factor'],
  );
  const calendar = compileDataset(declared('trade_calendar')).calendar;
  assert.ok(calendar);
  assert.equal(calendar.isOpen.type, 'flag');
});

it('a factor series whose code is not a key field is refused, naming the roles', () => {
  const d = declared('adj_factor');
  assert.throws(
    () => compileDataset({ ...d, key: ['date', 'source'] }),
    /factors code and date must be key fields/,
  );
});

it('a factor value that may be 0 or missing is refused', () => {
  const d = declared('adj_factor');
  const fields = { ...d.fields, adj_factor: 'number' as const };
  assert.throws(() => compileDataset({ ...d, fields }), /factors value must be a required number/);
});

it('a calendar whose exchange is not a key field, or whose isOpen is not a flag, is refused', () => {
  const d = declared('trade_calendar');
  const cal = d.calendar ?? assert.fail('trade_calendar has a calendar');
  assert.throws(
    () => compileDataset({ ...d, key: d.key.filter((k) => k !== cal.exchange) }),
    /calendar exchange and date must be key fields/,
  );
  assert.throws(
    () => compileDataset({ ...d, fields: { ...d.fields, [cal.isOpen]: 'string' as const } }),
    /calendar date must be a date and isOpen a required flag/,
  );
});

it('a role naming no field is refused, saying which role', () => {
  const d = declared('adj_factor');
  const factors = d.factors ?? assert.fail('adj_factor has factors');
  assert.throws(() => compileDataset({ ...d, factors: { ...factors, value: 'nope' } }), /factors value/);
});
