import { mkdir, rename, writeFile } from "node:fs/promises";
import path from "node:path";
import { randomBytes } from "node:crypto";
import nodemailer from "nodemailer";
import SMTPTransport from "nodemailer/lib/smtp-transport/index.js";
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

/**
 * How long the mail server may take to accept the connection, to greet, and to answer each command. A sign-up waits
 * for its verification mail, and nodemailer's defaults (2 minutes to connect, 10 minutes of silence) would keep it
 * waiting that long on a mail server that stalls. Parameters of SMTP_URL (`?socketTimeout=30000`) take precedence.
 */
const SMTP_TIMEOUTS = { connectionTimeout: 10_000, greetingTimeout: 10_000, socketTimeout: 15_000 };

/** SMTP through nodemailer when SMTP_URL is set. */
function smtpMailer(smtpUrl: string, from: string): Mailer {
  // the transport built from an options object: createTransport(url) would take the URL's settings alone
  const transport = nodemailer.createTransport(new SMTPTransport({ ...SMTP_TIMEOUTS, url: smtpUrl }));
  return {
    async send(message) {
      await transport.sendMail({ from, ...message });
    },
  };
}

/**
 * Without SMTP_URL each mail becomes a JSON file in DATA_DIR/outbox/ (and a log line), so development and
 * tests can follow verification and reset links without a mail server. A mail is written beside the outbox first and
 * renamed into it, so whoever reads the outbox never sees half a file.
 */
function outboxMailer(dir: string, from: string, clock: Clock, logger: Logger): Mailer {
  const staging = `${dir}.partial`;
  return {
    async send(message) {
      await Promise.all([mkdir(dir, { recursive: true }), mkdir(staging, { recursive: true })]);
      const safeTo = message.to.replace(/[^A-Za-z0-9@._+-]/g, "_");
      const name = `${clock.now()}-${randomBytes(3).toString("hex")}-${safeTo}.json`;
      const file = path.join(dir, name);
      const sentAt = new Date(clock.now()).toISOString();
      const written = path.join(staging, name);
      await writeFile(written, JSON.stringify({ from, ...message, sent_at: sentAt }, null, 2), { mode: 0o600 });
      await rename(written, file);
      logger.info({ to: message.to, subject: message.subject, file }, "mail written to outbox (SMTP_URL unset)");
    },
  };
}

export function createMailer(settings: MailerSettings, clock: Clock, logger: Logger): Mailer {
  return settings.smtpUrl
    ? smtpMailer(settings.smtpUrl, settings.from)
    : outboxMailer(path.join(settings.dataDir, "outbox"), settings.from, clock, logger);
}
