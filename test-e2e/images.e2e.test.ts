import { api, expectEnvelope } from './harness/api';
import { useStack, type StackMode } from './harness/stack';

jest.setTimeout(120_000);

describe.each<StackMode>(['embedded', 'processes'])('media service through the edge (%s)', (mode) => {
  const stack = useStack(mode);

  it('is ready, and a signed media link is its own credential: a forged one is refused without a key', async () => {
    if (stack.processes) expect((await stack.processes.readiness('media')).status).toBe(200);
    expectEnvelope(await api(stack.baseURL, 'GET', '/media/signed/eyJrIjoieCJ9.forged'), 403);
    expectEnvelope(await api(stack.baseURL, 'GET', '/images'), 401);
  });
});
