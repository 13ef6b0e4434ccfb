import type { MailMessage } from "./mailer";

const escapeHtml = (s: string): string =>
  s.replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[c] ?? c);

function linkMail(to: string, subject: string, intro: string, link: string, outro: string): MailMessage {
  return {
    to,
    subject,
    text: `${intro}\n\n${link}\n\n${outro}\n`,
    html: `<p>${escapeHtml(intro)}</p><p><a href="${escapeHtml(link)}">${escapeHtml(link)}</a></p><p>${escapeHtml(outro)}</p>`,
  };
}

export const verificationMail = (to: string, name: string, link: string): MailMessage =>
  linkMail(to, "Verify your e-mail address",
    `Hello${name ? ` ${name}` : ""}, please confirm your e-mail address by opening this link:`,
    link, "The link is valid for 24 hours. If you did not sign up, ignore this message.");

export const passwordResetMail = (to: string, link: string): MailMessage =>
  linkMail(to, "Reset your password", "Someone asked to reset the password of your account. To choose a new one, open this link:",
    link, "The link is valid for 1 hour and works once. If you did not ask for it, ignore this message; your password is unchanged.");
