// Every write of src/writes/, by name: the registry the threads that run writes look them up in
// (src/store/write.ts; the SQLite writer thread, PostgreSQL's heavy-write thread). A write not
// listed here cannot be sent to a thread, and a test that forgets one fails (test/store/write.test.ts).
import { registry, type Write, type WriteRegistry } from '../store/write.ts';
import { applyAlerts } from './alerts.ts';
import { backfillNext, claimBackfill, failBackfill, startBackfill } from './backfill.ts';
import { customerBatch, scoreBatch } from './batches.ts';
import { createCustomer, deleteCustomer, updateCustomer } from './customers.ts';
import { applyFactorUpdates } from './factor-updates.ts';
import { queueDigest } from './mail.ts';
import { applyMetricWrites, metricBatch } from './metrics.ts';
import { outcomeBatch, recordOutcome, removeOutcome } from './outcomes.ts';
import { deleteOverride, putOverride } from './overrides.ts';
import { createPlaybook, deletePlaybook, playbookPass, updatePlaybook } from './playbooks.ts';
import { applyThresholds, applyWeights, computePreview } from './rescore.ts';
import { deleteRule, previewRule, putRule, rescoreDue } from './rules.ts';
import { segmentIntake } from './segment.ts';
import { createSource, deleteSource, updateSource } from './sources.ts';
import { stripeIntake } from './stripe.ts';
import { createNote, createTask, deleteNote, deleteTask, updateNote, updateTask } from './tasks.ts';
import { createView, deleteView } from './views.ts';
import { webhookIntake } from './webhook-intake.ts';
import {
  createWebhook,
  deleteWebhook,
  retryDelivery,
  rotateWebhookSecret,
  sendTestEvent,
  updateWebhook,
} from './webhooks.ts';

export const WRITES: WriteRegistry = registry([
  createCustomer,
  updateCustomer,
  deleteCustomer,
  applyFactorUpdates,
  applyMetricWrites,
  metricBatch,
  customerBatch,
  scoreBatch,
  recordOutcome,
  outcomeBatch,
  removeOutcome,
  putOverride,
  deleteOverride,
  applyWeights,
  applyThresholds,
  applyAlerts,
  computePreview,
  previewRule,
  putRule,
  deleteRule,
  rescoreDue,
  createWebhook,
  updateWebhook,
  deleteWebhook,
  rotateWebhookSecret,
  sendTestEvent,
  retryDelivery,
  createView,
  deleteView,
  startBackfill,
  claimBackfill,
  backfillNext,
  failBackfill,
  createSource,
  updateSource,
  deleteSource,
  segmentIntake,
  createTask,
  updateTask,
  deleteTask,
  createNote,
  updateNote,
  deleteNote,
  createPlaybook,
  updatePlaybook,
  deletePlaybook,
  playbookPass,
  stripeIntake,
  webhookIntake,
  queueDigest,
] as unknown as Write<unknown[], unknown>[]);
