import type { QueryPlan } from '../../src/model/query-plan.js';
import type { Store } from '../../src/storage/store.js';

/** The store with every resampled plan marked `computed`: the on-demand reference. */
export function computedStore(store: Store): Store {
  const mark = (args: unknown[]): unknown[] => {
    const plan = args[0] as QueryPlan | undefined;
    if (plan && typeof plan === 'object' && 'bars' in plan && plan.bars) {
      return [{ ...plan, bars: { ...plan.bars, computed: true } }, ...args.slice(1)];
    }
    return args;
  };
  const datasets = new Proxy(store.datasets, {
    get(target, p) {
      const v: unknown = Reflect.get(target, p, target);
      if (typeof v !== 'function') return v;
      return (...args: unknown[]) => (v as (...a: unknown[]) => unknown).apply(target, mark(args));
    },
  });
  return new Proxy(store, {
    get(target, p) {
      if (p === 'datasets') return datasets;
      const v: unknown = Reflect.get(target, p, target);
      return typeof v === 'function' ? (v as (...a: unknown[]) => unknown).bind(target) : v;
    },
  });
}
