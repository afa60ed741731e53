import { runService } from '@gatehouse/service';
import { authService } from './auth.service-definition.js';

await runService(authService);
