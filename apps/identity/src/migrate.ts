import { migrateService } from '@gatehouse/service';
import { identityService } from './identity.service-definition.js';

await migrateService(identityService);
