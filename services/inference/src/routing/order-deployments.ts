/**
 * Try order of a model's deployments: ascending `priority` (default: the catalogue order), and within one
 * priority a weighted random order, so traffic spreads by weight and falls back across priorities.
 */
export function orderDeployments<T>(items: T[], deploymentOf: (item: T) => { priority?: number; weight: number }, random: () => number = Math.random): T[] {
  const groups = new Map<number, T[]>();
  items.forEach((item, index) => {
    const priority = deploymentOf(item).priority ?? index;
    groups.set(priority, [...(groups.get(priority) ?? []), item]);
  });
  return [...groups.keys()].sort((a, b) => a - b).flatMap((p) => weightedShuffle(groups.get(p)!, (i) => deploymentOf(i).weight, random));
}

function weightedShuffle<T>(items: T[], weightOf: (item: T) => number, random: () => number): T[] {
  const pool = [...items];
  const out: T[] = [];
  while (pool.length > 0) {
    const total = pool.reduce((sum, i) => sum + weightOf(i), 0);
    let pick = random() * total;
    let idx = pool.findIndex((i) => (pick -= weightOf(i)) < 0);
    if (idx < 0) idx = pool.length - 1;
    out.push(pool.splice(idx, 1)[0]);
  }
  return out;
}
