import { DuplicateKeyError, type Collection } from '@gw/store';
import { groupDocId, type GroupDoc } from './docs';

/**
 * One member's hold on a (group, topic): only the holder of an unexpired lease consumes, and it can commit
 * only while it still holds it, so two members (in one process or several on a shared store) never both
 * consume the same entries, and a member that lost its lease cannot move the offset.
 */
export class GroupLease {
  private readonly id: string;

  constructor(
    private readonly groups: Collection<GroupDoc>,
    private readonly group: string,
    private readonly topic: string,
    private readonly member: string,
    private readonly leaseMs: number,
    private readonly ephemeral = false,
  ) {
    this.id = groupDocId(group, topic);
  }

  /** Creates the group's position on first use; an existing group keeps its committed offset. */
  async ensure(initialOffset: number): Promise<void> {
    try {
      await this.groups.updateOne(
        { _id: this.id },
        { $setOnInsert: { group: this.group, topic: this.topic, offset: initialOffset, owner: null, leaseUntil: 0, ...(this.ephemeral ? { ephemeral: true, createdAt: Date.now() } : {}) } },
        { upsert: true },
      );
    } catch (err) {
      // Another member created it at the same moment.
      if (!(err instanceof DuplicateKeyError)) throw err;
    }
  }

  /** Takes or extends the lease; returns the committed offset when this member holds it, else null. */
  async claim(): Promise<number | null> {
    const now = Date.now();
    const doc = await this.groups.findOneAndUpdate(
      { _id: this.id, $or: [{ owner: this.member }, { leaseUntil: { $lt: now } }] },
      { $set: { owner: this.member, leaseUntil: now + this.leaseMs } },
    );
    return doc ? doc.offset : null;
  }

  /** Extends the lease; false when another member has taken it. */
  async renew(): Promise<boolean> {
    const r = await this.groups.updateOne({ _id: this.id, owner: this.member }, { $set: { leaseUntil: Date.now() + this.leaseMs } });
    return r.matched > 0;
  }

  /** Moves the offset forward (never back); false when the lease was lost and nothing was written. */
  async commit(offset: number): Promise<boolean> {
    const r = await this.groups.updateOne(
      { _id: this.id, owner: this.member },
      { $max: { offset }, $set: { leaseUntil: Date.now() + this.leaseMs } },
    );
    return r.matched > 0;
  }

  /** Gives the lease up for the next member; an ephemeral group has none, and goes. */
  async release(): Promise<void> {
    if (this.ephemeral) await this.groups.deleteOne({ _id: this.id, owner: this.member });
    else await this.groups.updateOne({ _id: this.id, owner: this.member }, { $set: { owner: null, leaseUntil: 0 } });
  }
}
