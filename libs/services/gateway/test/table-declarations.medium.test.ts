/** Typed tables (medium tier): the gateway's declarations match its migrations. */
import { INBOX_EVENT, OUTBOX_EVENT, PARKED_EVENT } from '@tollgate/messaging';
import { inSchema } from '@tollgate/persistence';
import { expectTablesAsMigrated } from '@tollgate/testing';
import { CALL, OPERATION_KEY } from '../src/lib/calls/calls.repository';
import { AGENT, CREDENTIAL, MCP_URL, OWNER } from '../src/lib/authenticate/identities.repository';
import { RATE_LIMIT } from '../src/lib/rate-limit/rate-limits.service';
import { TOOL_EMBEDDING } from '../src/lib/semantic-search/semantic-index.service';
import { DEVICE_SIGN_IN, OWNER_KEY } from '../src/lib/sign-in/sign-ins.repository';
import { ACCESS_POLICY } from '../src/lib/access-policy/access-policies.repository';
import { CATALOG_TOOL } from '../src/lib/sync-catalog/catalog-tools.repository';
import { gatewayDataSourceOptions } from '../src/lib/gateway.datasource-options';
import { OAUTH_CLIENT, OAUTH_GRANT, OAUTH_REQUEST } from '../src/lib/oauth/oauth.repository';

jest.setTimeout(60_000);

describe('the gateway\'s tables', () => expectTablesAsMigrated('gw', gatewayDataSourceOptions, [CALL, OPERATION_KEY, OWNER, AGENT, MCP_URL, CREDENTIAL, RATE_LIMIT, TOOL_EMBEDDING, DEVICE_SIGN_IN, OWNER_KEY, CATALOG_TOOL, ACCESS_POLICY, OAUTH_CLIENT, OAUTH_GRANT, OAUTH_REQUEST,
  // The messaging kit's tables, as the gateway's migrations built its copy of them.
  inSchema(OUTBOX_EVENT, 'gateway'), inSchema(INBOX_EVENT, 'gateway'), inSchema(PARKED_EVENT, 'gateway')]));
