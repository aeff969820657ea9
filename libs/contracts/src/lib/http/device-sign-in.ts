/**
 * The gateway's device sign-in HTTP API (G2), shared by the gateway and the
 * local bridge: `POST /signin/device` answers SignInStarted; the device then
 * polls `POST /signin/device/:requestId/poll {pollToken}` for a SignInPoll.
 */
export interface SignInStarted {
  requestId: string;
  /** Secret of the device: only it can collect the credential. */
  pollToken: string;
  /** Shown on the device and on the approval page, so the owner approves the right one. */
  userCode: string;
  approvalUrl: string;
  expiresAt: string;
  intervalMs: number;
}

export type SignInPoll =
  | { status: 'pending'; expiresAt: string }
  | { status: 'approved'; credential: string; agentId: string; mcpPath: string }
  | { status: 'expired' | 'collected' | 'unknown' };
