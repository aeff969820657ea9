import { type EntityManager } from 'typeorm';
import { col, defineTable, type RowOf, select } from '@tollgate/persistence';

/** Whom a policy applies to: an owner (every URL of it) or one MCP URL. */
export type PolicySubject = 'owner' | 'url';

/** `gateway.access_policy`: every version of every owner's and URL's access policy (the text, as written). */
export const ACCESS_POLICY = defineTable('gateway.access_policy', {
  subject_kind: col.text<PolicySubject>().required(),
  subject_id: col.uuid().required(),
  version: col.integer().required(),
  text: col.text().required(),
  created_at: col.timestamptz().required(),
});
export type AccessPolicyRow = RowOf<typeof ACCESS_POLICY>;

type Executor = Pick<EntityManager, 'query'>;

/** The statements on `gateway.access_policy`. */
export const AccessPolicies = {
  /** The latest version of the owner's policy and of the URL's, where they exist. */
  latest(m: Executor, ownerId: string, mcpUrlId: string): Promise<Pick<AccessPolicyRow, 'subject_kind' | 'version' | 'text'>[]> {
    return select(m, ACCESS_POLICY, ['subject_kind', 'version', 'text'],
      `SELECT DISTINCT ON (subject_kind) subject_kind, version, text FROM gateway.access_policy
        WHERE (subject_kind = 'owner' AND subject_id = $1) OR (subject_kind = 'url' AND subject_id = $2)
        ORDER BY subject_kind, version DESC`, [ownerId, mcpUrlId]);
  },

  /** A new version of a subject's policy (the next number); its version. */
  async add(m: Executor, subject: PolicySubject, subjectId: string, text: string): Promise<number> {
    const [row] = await select(m, ACCESS_POLICY, ['version'],
      `INSERT INTO gateway.access_policy (subject_kind, subject_id, version, text)
       SELECT $1, $2, COALESCE(max(version), 0) + 1, $3 FROM gateway.access_policy WHERE subject_kind = $1 AND subject_id = $2
       RETURNING version`, [subject, subjectId, text]);
    return row!.version;
  },
};
