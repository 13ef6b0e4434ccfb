import { mkdir, writeFile } from "node:fs/promises";
import path from "node:path";
import { randomBytes } from "node:crypto";
import nodemailer from "nodemailer";
import type { Logger } from "pino";
import type { Clock } from "@gw/shared";

export interface MailMessage {
  to: string;
  subject: string;
  text: string;
  html: string;
}

export interface Mailer {
  send(message: MailMessage): Promise<void>;
}

export interface MailerSettings {
  smtpUrl?: string;
  from: string;
  dataDir: string;
}

/** SMTP through nodemailer when SMTP_URL is set. */
function smtpMailer(smtpUrl: string, from: string): Mailer {
  const transport = nodemailer.createTransport(smtpUrl);
  return {
    async send(message) {
      await transport.sendMail({ from, ...message });
    },
  };
}

/**
 * Without SMTP_URL each mail becomes a JSON file in DATA_DIR/outbox/ (and a log line), so development and
 * tests can follow verification and reset links without a mail server.
 */
function outboxMailer(dir: string, from: string, clock: Clock, logger: Logger): Mailer {
  return {
    async send(message) {
      await mkdir(dir, { recursive: true });
      const safeTo = message.to.replace(/[^A-Za-z0-9@._+-]/g, "_");
      const file = path.join(dir, `${clock.now()}-${randomBytes(3).toString("hex")}-${safeTo}.json`);
      const sentAt = new Date(clock.now()).toISOString();
      await writeFile(file, JSON.stringify({ from, ...message, sent_at: sentAt }, null, 2), { mode: 0o600 });
      logger.info({ to: message.to, subject: message.subject, file }, "mail written to outbox (SMTP_URL unset)");
    },
  };
}

export function createMailer(settings: MailerSettings, clock: Clock, logger: Logger): Mailer {
  return settings.smtpUrl
    ? smtpMailer(settings.smtpUrl, settings.from)
    : outboxMailer(path.join(settings.dataDir, "outbox"), settings.from, clock, logger);
}
