// The console talks to the services only through @gatehouse/sdk (libs/sdk).
export { createGatehouse, GatehouseError, unwrap, type Gatehouse } from '@gatehouse/sdk';
