import { ChatJobStore } from './chat-job-store';
import { ChatJobSweeper } from './chat-job-sweeper';
import { eventually, openTestStore, queuedJob, silentLogger, type TestStore } from './chat-job-test-support';

describe('chat job sweeper', () => {
  let t: TestStore;

  beforeEach(async () => { t = await openTestStore('embedded'); });
  afterEach(async () => { await t.dispose(); });

  it('expires queued jobs past their estimate on its interval, and stops cleanly', async () => {
    const jobs = new ChatJobStore(t.store);
    const stale = queuedJob({ expires_at_ms: Date.now() - 1 });
    const fresh = queuedJob();
    await jobs.insert(stale);
    await jobs.insert(fresh);
    const sweeper = new ChatJobSweeper(jobs, 20, silentLogger());
    sweeper.start();
    await eventually(async () => (await jobs.findById(stale._id))?.status === 'expired');
    await sweeper.stop();
    expect((await jobs.findById(fresh._id))?.status).toBe('queued');
    expect((await jobs.findById(stale._id))?.expired_at_ms).toEqual(expect.any(Number));
  });
});
