import { runService } from '@gatehouse/service';
import { identityService } from './identity.service-definition.js';

await runService(identityService);
