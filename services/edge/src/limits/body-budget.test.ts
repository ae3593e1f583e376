import { EventEmitter } from 'node:events';
import type { ServerResponse } from 'node:http';
import { edgeConfigSchema } from '../config';
import { BodyBudget, bodyBytesOf } from './body-budget';

const response = () => new EventEmitter() as unknown as ServerResponse;

describe('BodyBudget', () => {
  it('holds bodies until their responses close, and refuses one that does not fit beside them', () => {
    const budget = new BodyBudget(1_000);
    const first = response();
    const second = response();
    expect(budget.holdUntilClosed(500, 'acct_a', first)).toBe(true);
    expect(budget.holdUntilClosed(400, 'acct_b', second)).toBe(true);
    expect(budget.holdUntilClosed(101, 'acct_c', response())).toBe(false);
    expect(budget.holdUntilClosed(100, 'acct_c', response())).toBe(true);
    expect(budget.held).toBe(1_000);
    first.emit('close');
    expect(budget.held).toBe(500);
    expect(budget.holdUntilClosed(500, 'acct_a', response())).toBe(true);
    // A response closes once: a second event gives nothing back twice.
    second.emit('close');
    second.emit('close');
    expect(budget.held).toBe(600);
  });

  it('lets no account hold more than half of it, whatever room is left', () => {
    const budget = new BodyBudget(1_000);
    const held = response();
    expect(budget.holdUntilClosed(300, 'acct_flood', held)).toBe(true);
    expect(budget.holdUntilClosed(200, 'acct_flood', response())).toBe(true);
    expect(budget.holdUntilClosed(1, 'acct_flood', response())).toBe(false);
    expect(budget.holdUntilClosed(500, 'acct_other', response())).toBe(true);
    held.emit('close');
    expect(budget.holdUntilClosed(300, 'acct_flood', response())).toBe(true);
  });

  it('holds nothing for a request without a body, and nothing at all with no budget', () => {
    const budget = new BodyBudget(10);
    expect(budget.holdUntilClosed(0, 'acct_a', response())).toBe(true);
    expect(budget.held).toBe(0);
    const none = new BodyBudget(0);
    expect(none.holdUntilClosed(Number.MAX_SAFE_INTEGER, 'acct_a', response())).toBe(true);
    expect(none.held).toBe(0);
  });
});

describe('bodyBytesOf', () => {
  it.each([
    [{ 'content-length': '512' }, 512],
    [{ 'content-length': '0' }, 0],
    [{ 'transfer-encoding': 'chunked' }, 4096],
    [{}, 0],
  ])('%j counts %i against a route limit of 4096', (headers, bytes) => {
    expect(bodyBytesOf(headers, 4096)).toBe(bytes);
  });
});

describe('BODY_MEMORY_BUDGET_BYTES', () => {
  const base = { GATEWAY_IDENTITY_SECRET: 'edge-budget-test-secret-0123456789abcdef', BODY_LIMIT_BYTES: '1000', MEDIA_BODY_LIMIT_BYTES: '3000' };

  it('is refused when an account\'s half could not hold the largest body a route reads whole, naming itself', () => {
    const parsed = edgeConfigSchema.safeParse({ ...base, BODY_MEMORY_BUDGET_BYTES: '5999' });
    expect(parsed.success).toBe(false);
    expect(parsed.error?.issues[0]).toMatchObject({ path: ['BODY_MEMORY_BUDGET_BYTES'], message: expect.stringContaining('6000') });
  });

  it('takes 0 (no budget) or any size from twice that largest body up', () => {
    expect(edgeConfigSchema.parse({ ...base, BODY_MEMORY_BUDGET_BYTES: '0' }).BODY_MEMORY_BUDGET_BYTES).toBe(0);
    expect(edgeConfigSchema.parse({ ...base, BODY_MEMORY_BUDGET_BYTES: '6000' }).BODY_MEMORY_BUDGET_BYTES).toBe(6000);
    expect(edgeConfigSchema.parse(base).BODY_MEMORY_BUDGET_BYTES).toBe(256 * 1024 * 1024);
  });
});
