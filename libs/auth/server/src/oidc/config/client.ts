/** oidc-provider Client with our extra metadata (@gatehouse/oidc-clients EXTRA_CLIENT_PROPERTIES). */
export interface GatehouseClient {
  clientId: string;
  instance_id?: string;
  tenant_id?: string;
  is_global?: boolean;
  refresh_token_ttl?: number;
  id_token_ttl?: number;
  is_first_party?: boolean;
}
