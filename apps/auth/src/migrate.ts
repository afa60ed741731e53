import { migrateService } from '@gatehouse/service';
import { authService } from './auth.service-definition.js';

await migrateService(authService);
