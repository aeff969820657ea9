/** Bounds on what the policy tools read and return (stated in docs/policy-reference.md). */
export const POLICY_LIMITS = {
  /** A policy file larger than this is not read (E_POLICY_READ). */
  maxPolicyBytes: 256 * 1024,
  /** YAML aliases per document (a "billion laughs" file is refused). */
  maxYamlAliases: 100,
  /** Calls in an `assay_check_sequence` history. */
  maxHistory: 1000,
  /** Characters of a tool name. */
  maxToolNameChars: 256,
  /** Characters of an error message. */
  maxMessageChars: 200,
  /** Violations reported per check (the rest are summarised in one). */
  maxViolations: 50,
} as const;
