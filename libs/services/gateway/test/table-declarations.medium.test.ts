/** Typed tables (medium tier): the gateway's declarations match its migrations. */
import { expectTablesAsMigrated } from '@tollgate/testing';
import { CALL, OPERATION_KEY } from '../src/lib/calls/calls.repository';
import { CREDENTIAL, MCP_URL } from '../src/lib/authenticate/identities.repository';
import { DEVICE_SIGN_IN, OWNER_KEY } from '../src/lib/sign-in/sign-ins.repository';
import { ACCESS_POLICY } from '../src/lib/access-policy/access-policies.repository';
import { CATALOG_TOOL } from '../src/lib/sync-catalog/catalog-tools.repository';
import { gatewayDataSourceOptions } from '../src/lib/gateway.datasource-options';

jest.setTimeout(60_000);

describe('the gateway\'s tables', () => expectTablesAsMigrated('gw', gatewayDataSourceOptions, [CALL, OPERATION_KEY, MCP_URL, CREDENTIAL, DEVICE_SIGN_IN, OWNER_KEY, CATALOG_TOOL, ACCESS_POLICY]));
