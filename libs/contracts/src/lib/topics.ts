/**
 * Every Kafka topic the system uses, in one place.
 *
 * Names follow `<context>.<entity>.<event>.v<N>` and are NEVER renamed once
 * published: a breaking change gets a new `vN+1` topic beside the old one.
 * `infra/kafka/kafka.sh topics` creates exactly this list.
 */
export const Topics = {
  callRequested: 'gateway.call.requested.v1',
  callCancelRequested: 'gateway.call.cancel-requested.v1',
  paymentHeld: 'payment.hold.placed.v1',
  paymentRejected: 'payment.hold.rejected.v1',
  callDispatched: 'execution.call.dispatched.v1',
  /** Progress a provider reported mid-call, for the agent that asked for it (at most once, not a fact). */
  callProgressed: 'execution.call.progressed.v1',
  resultReceived: 'execution.result.received.v1',
  outcomeUnknown: 'execution.outcome.unknown.v1',
  effectConfirmed: 'execution.effect.confirmed.v1',
  effectRejected: 'execution.effect.rejected.v1',
  callSettled: 'settlement.call.settled.v1',
  callRefunded: 'settlement.call.refunded.v1',
  walletFunded: 'payment.wallet.funded.v1',
  walletChargedBack: 'payment.wallet.charged-back.v1',
  holdReleased: 'payment.hold.released.v1',
  payoutIssued: 'settlement.payout.issued.v1',
  /** v2: the full catalog model (listing, versions, bindings per transport). v1 is retired: nothing produces it. */
  catalogTool: 'discovery.catalog.tool.v2',
  catalogToolV1Retired: 'discovery.catalog.tool.v1',
  deadLetter: 'ops.deadletter.parked.v1',
} as const;

export type TopicName = (typeof Topics)[keyof typeof Topics];

export interface TopicSpec {
  name: TopicName;
  partitions: number;
  /** A compacted topic keeps the latest value per key forever (read models rebuild from it). */
  compacted: boolean;
  /** Kept this long whatever the cluster's event retention (a notice nobody replays), in ms; absent: the cluster's. */
  retentionMs?: number;
}

/** Progress notices matter while their call runs (at most a call's 30 s): an hour is plenty. */
const NOTICE_RETENTION_MS = 3_600_000;

const CALL_LIFE_PARTITIONS = 6;

export const TopicSpecs: readonly TopicSpec[] = Object.values(Topics).map((name) => ({
  name,
  partitions: name === Topics.deadLetter ? 1 : CALL_LIFE_PARTITIONS,
  compacted: name === Topics.catalogTool || name === Topics.catalogToolV1Retired,
  ...(name === Topics.callProgressed ? { retentionMs: NOTICE_RETENTION_MS } : {}),
}));

export const TOPIC_NAME_PATTERN = /^[a-z][a-z0-9-]*\.[a-z][a-z0-9-]*\.[a-z][a-z0-9-]*\.v[1-9][0-9]*$/;
