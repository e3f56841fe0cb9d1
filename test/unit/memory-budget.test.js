// The memory budget's arithmetic (server/memory-budget.js): the default share, and the setting over it.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { budgetMbOf, defaultBudgetMb, memoryGiven, WORKERS_SHARE } from '../../server/memory-budget.js';

const GiB = 1024 ** 3;

test('the default budget is WORKERS_SHARE of the memory given, divided among the workers, in whole MiB', () => {
  assert.equal(WORKERS_SHARE, 0.8);
  assert.equal(defaultBudgetMb(2, 24 * GiB), Math.floor((24 * 1024 * 0.8) / 2));
  assert.equal(defaultBudgetMb(4, 512 * 1024 ** 2), 102);
  assert.equal(defaultBudgetMb(1_000_000, GiB), 1, 'never 0: 0 means "derive it"');
});

test('WORKER_MEMORY_MB wins over the default; 0 derives it from the memory this machine or container gives', () => {
  assert.equal(budgetMbOf({ WORKER_MEMORY_MB: 300, WORKERS: 2 }), 300);
  assert.equal(budgetMbOf({ WORKER_MEMORY_MB: 0, WORKERS: 2 }), defaultBudgetMb(2, memoryGiven()));
  assert.ok(memoryGiven() > 0);
});
