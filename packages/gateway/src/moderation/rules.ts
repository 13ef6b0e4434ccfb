// Rules for words that are harmless alone and a violation only in context: "marvel" (a word, and a brand), "Luigi"
// (a name, and a Nintendo character), "passport" (an object, and a person's identity document), "killing" (time, or
// a person). Each rule is a regular expression on the normalized text (lower-case words separated by single spaces,
// see normalize.ts), compiled once when the module loads. Documented in docs/moderation.md.

import type { ModerationCategory } from "./terms";

export interface ContextRule {
  category: ModerationCategory;
  /** for logs */
  name: string;
  pattern: RegExp;
  /** when set, the rule fires only if this also matches somewhere in the same text */
  context?: RegExp;
  /** when set, the rule does not fire if this matches somewhere in the same text */
  unless?: RegExp;
}

const any = (...alternatives: string[]): string => `(?:${alternatives.join("|")})`;
/** A whole-word match of `source` in the normalized text. */
const words = (source: string): RegExp => new RegExp(`(?:^| )${source}(?= |$)`);

const DETERMINER = any(
  "a", "an", "the", "this", "that", "these", "those", "his", "her", "their", "its", "my", "your", "our", "some", "several",
  "many", "all", "every", "another", "two", "three", "four", "five",
);

// --- violence: a killing verb aimed at a person ("a soldier killing a child"; "killing time", "shooting star" pass)

// Not "shoot"/"shot" (photography: "cinematic shot", "a photographer shooting a model") nor "beat" (games: "beating
// his friend at chess"): their violent uses are listed as phrases in terms.ts ("shot in the head", "beaten to death").
const HARM_VERB = any(
  "kill", "kills", "killing", "killed", "strangle", "strangles", "strangling", "strangled", "choke", "chokes", "choking",
  "choked", "execute", "executes", "executing", "executed", "slaughter", "slaughters", "slaughtering", "butcher", "butchers",
  "butchering", "butchered", "burn", "burns", "burning", "burned", "burnt", "stab", "drown", "drowning",
);
const VICTIM_ADJECTIVE = any(
  "young", "little", "small", "innocent", "unarmed", "helpless", "defenseless", "defenceless", "old", "elderly", "pregnant",
  "crying", "screaming", "begging", "kneeling", "wounded", "injured", "poor", "black", "white", "asian", "jewish", "muslim",
);
const PEOPLE = any(
  "men", "women", "children", "kids", "babies", "infants", "toddlers", "boys", "girls", "people", "persons", "humans", "hostages",
  "prisoners", "civilians", "soldiers", "villagers", "students", "teens", "teenagers", "victims", "officers", "cops",
  "protesters", "refugees", "parents",
);
const PERSON = any(
  PEOPLE, "man", "woman", "child", "kid", "baby", "infant", "toddler", "boy", "girl", "person", "human", "hostage", "prisoner",
  "civilian", "soldier", "villager", "student", "teen", "teenager", "victim", "officer", "cop", "protester", "refugee",
  "wife", "husband", "mother", "father", "son", "daughter", "brother", "sister", "neighbor", "neighbour", "friend",
);
// Shooting and beating are violent when their object is plainly a victim ("soldiers shooting an unarmed man", "a gang
// beating a helpless woman"); "an old woman" or "his friend" alone is a photo subject or a chess opponent.
const SHOOT_OR_BEAT = any("shoot", "shoots", "shooting", "beat", "beats", "beating");
const VICTIM = any(
  "unarmed", "helpless", "innocent", "defenseless", "defenceless", "kneeling", "begging", "screaming", "crying", "wounded",
  "injured", "pregnant", "handcuffed", "bound", "restrained",
);
const SHOOTING_A_VICTIM = words(`${SHOOT_OR_BEAT} (?:${DETERMINER} )?(?:[a-z]+ )?${VICTIM} (?:[a-z]+ )?${PERSON}`);

// A singular person needs a determiner ("killing a man"), so the "Burning Man festival" passes; a possessive is not
// the victim ("burning the children's drawings").
const HARMING_A_PERSON = words(
  `${HARM_VERB} (?:${DETERMINER} (?:${VICTIM_ADJECTIVE} ){0,2}${PERSON}|(?:${VICTIM_ADJECTIVE} ){0,2}${PEOPLE})(?! s(?: |$))`,
);

// A person killed, told in the passive ("children killed in war", "a boy was executed at dawn"): the person, then the
// participle followed by nothing, a clause mark or a preposition; an object after it makes it active ("a girl killed it
// on stage", "a knight killed the dragon").
const KILLED = any("killed", "slaughtered", "butchered", "executed", "massacred", "strangled", "hanged");
const AUXILIARY = any("was", "were", "is", "are", "being", "been", "get", "gets", "got", "getting");
const AFTER_PASSIVE = any("in", "by", "at", "on", "during", "with", "while", "after", "for", "near", "like", "outside", "inside");
const PERSON_KILLED = words(
  `${PERSON}(?: (?:who |that )?${AUXILIARY})?(?: [a-z]+ly)? ${KILLED}(?=$| \\|| ${AFTER_PASSIVE}(?: |$))`,
);

// A dead person ("a dead baby", "dead children", "a dead young woman"); "a dead tree", "dead end street", "dead tired
// man" (an intensifier), "a dead man's switch" and "a dead baby bird" pass.
const YOUNG_ANIMAL = any(
  "bird", "birds", "animal", "animals", "deer", "seal", "seals", "shark", "sharks", "turtle", "turtles", "rabbit", "rabbits",
  "bunny", "bunnies", "mouse", "mice", "rat", "rats", "squirrel", "squirrels", "owl", "owls", "fox", "foxes", "goat", "goats",
  "duck", "ducks", "chick", "chicks", "fish", "snake", "snakes", "spider", "spiders", "whale", "whales", "dolphin", "dolphins",
);
const DEAD_PERSON = words(`dead (?:${VICTIM_ADJECTIVE} ){0,2}${PERSON}(?! s(?: |$))(?! ${YOUNG_ANIMAL}(?: |$))`);

// Wounds told with everyday verbs, aimed at a person by a possessive: "a man with his throat cut", "blowing his brains
// out"; "cut the cake", "a cut-throat razor" and "blowing out the candles" pass.
const POSSESSIVE = any("his", "her", "their", "my", "your", "our", "someone s", "somebody s");
const THROAT_CUT = words(
  `(?:${any("cut", "cuts", "cutting", "slit", "slits", "slitting", "slash", "slashes", "slashed", "slashing")} ${POSSESSIVE} throats?|throats? ${any("cut", "slit", "slashed")})`,
);
const BRAINS_BLOWN_OUT = words(`${any("blow", "blows", "blew", "blowing", "blown")} ${POSSESSIVE} ${any("brains out", "head off", "heads off")}`);

// --- sexual: a suggestive word with revealing clothes ("a sexy red sports car" or "a lingerie catalog" pass)

const SUGGESTIVE = words(any("sexy", "seductive", "sensual", "sultry", "provocative", "lustful", "steamy"));
const REVEALING = words(any("lingerie", "underwear", "panties", "thong", "thongs", "bra", "g string", "stockings", "garter", "garters", "half naked"));

// --- sexual: an erection, but not a building's ("the erection of a tower", "scaffolding erection", "steel erection crew")

const CONSTRUCTION = any(
  "steel", "scaffold", "scaffolding", "tent", "building", "bridge", "tower", "mast", "crane", "frame", "formwork", "roof",
  "structure", "structural", "monument", "statue", "fence", "wall", "stage", "pole", "girder", "precast", "marquee",
);
const ERECTION = words(
  `(?<!(?:^| )${CONSTRUCTION} )erections?(?! ${any("of", "crew", "crews", "works", "site", "sites", "sequence", "drawing", "drawings")}(?: |$))`,
);

// --- hate: a group of people depicted as animals ("black people as monkeys"; "a monkey in the jungle" passes)

const GROUP = any(
  `${any(
    "black", "african", "african american", "jewish", "muslim", "arab", "asian", "chinese", "japanese", "mexican", "latino",
    "latina", "hispanic", "indian", "native american", "gay", "lesbian", "trans", "transgender", "romani", "immigrant", "refugee",
  )} ${any("people", "persons", "person", "men", "man", "women", "woman", "kids", "children", "folks", "family", "families")}`,
  "blacks", "africans", "jews", "muslims", "arabs", "asians", "mexicans", "latinos", "hispanics", "indians", "gays", "gypsies",
  "immigrants", "refugees",
);
const ANIMAL = any(
  "monkey", "monkeys", "ape", "apes", "gorilla", "gorillas", "chimp", "chimps", "chimpanzee", "chimpanzees", "baboon", "baboons",
  "rat", "rats", "vermin", "cockroach", "cockroaches", "roach", "roaches", "pig", "pigs", "insect", "insects", "parasite",
  "parasites", "animal", "animals", "dog", "dogs", "snake", "snakes", "locust", "locusts",
);
const DEPICTED = any("drawn", "depicted", "portrayed", "shown", "pictured", "represented", "illustrated", "caricatured");
// "as" right after the group or a depiction verb: "black people as monkeys", "jews drawn as rats"; "kids dressed as
// animals for a school play" passes. Or the group said to be the animal, which ends the clause ("a poster saying jews
// are vermin"); "asian people are animal lovers" and "mexican families are dog owners" pass.
const DEHUMANIZING = words(any(
  `${GROUP}(?: ${DEPICTED})? as (?:${DETERMINER} )?(?:[a-z]+ )?${ANIMAL}`,
  `${GROUP} ${any("are", "were")} (?:${DETERMINER} )?(?:[a-z]+ )?${ANIMAL}(?= \\||$)`,
));

// --- hate: the swastika, except as the Hindu, Buddhist and Jain symbol it also is, unless Nazi context comes with it

const SWASTIKA = words("swastikas?");
const RELIGIOUS_SWASTIKA = words(
  any("hindu", "hindus", "hinduism", "buddhist", "buddhists", "buddhism", "jain", "jains", "jainism", "sanskrit", "diwali", "rangoli", "vedic"),
);
const NAZI_CONTEXT = words(
  any(
    "nazi", "nazis", "hitler", "reich", "ss", "wehrmacht", "gestapo", "fascist", "fascists", "fascism", "aryan", "kkk", "jew", "jews",
    "jewish", "synagogue", "synagogues", "armband", "armbands", "rally", "white power", "white pride",
  ),
);

// The SS's runes: "SS" alone is a steamship ("SS Titanic"), stainless steel or a car badge, so only with a symbol word
const SS_SYMBOL = words(
  `ss ${any("insignia", "insignias", "symbol", "symbols", "rune", "runes", "lightning bolts", "armband", "armbands", "flag", "flags", "banner", "banners")}`,
);

// --- intellectual property: names that are also ordinary words or names, with the franchise that makes them a character

const DISNEY = any("disney", "pixar");
const NINTENDO = any("nintendo", "bowser", "princess peach", "yoshi", "mushroom kingdom", "goomba", "goombas", "koopa");
// "an old sailor moon tattoo" is an old sailor's moon tattoo: "sailor" described as a person is a sailor, and the phrase
// is the character only with its franchise; "Sailor Moon" and "a Sailor Moon tattoo" are the character.
const SAILOR_AS_PERSON = any("old", "young", "drunken", "drunk", "lonely", "lone", "retired", "weathered", "grizzled", "bearded", "salty", "tired");
const SAILOR_MOON_FRANCHISE = any(
  "anime", "manga", "cartoon", "episode", "episodes", "series", "character", "characters", "cosplay", "figurine", "fan art",
  "usagi", "tsukino", "tuxedo mask", "sailor scout", "sailor scouts", "sailor senshi", "sailor guardian", "sailor guardians",
  "sailor mercury", "sailor mars", "sailor jupiter", "sailor venus", "sailor chibi moon", "chibiusa", "moon prism", "magical girl",
);

const MARVEL_BRAND = words(
  `marvel ${any(
    "s", "comic", "comics", "studio", "studios", "universe", "cinematic", "entertainment", "superhero", "superheroes", "hero",
    "heroes", "character", "characters", "villain", "villains", "movie", "movies", "film", "films", "style", "avengers", "poster",
    "costume",
  )}`,
);

// --- personal information: an identity or financial document tied to a person or showing their details

const DOCUMENT = any(
  "passport", "passports", "driver s license", "driver s licence", "drivers license", "drivers licence", "driver license",
  "driver licence", "driving license", "driving licence", "driver s permit", "drivers permit", "driving permit", "id card",
  "id cards", "identity card", "identity cards", "identification card", "national id", "national id card", "residence permit",
  "green card", "birth certificate", "birth certificates", "bank statement", "bank statements", "tax return", "tax returns",
  "payslip", "pay stub",
);
/** Possessors that name nobody in particular: "someone's passport" is a prop, "John Smith's passport" is not. */
const ANYONE = any(
  "someone", "somebody", "anyone", "anybody", "everyone", "everybody", "nobody", "today", "tomorrow", "yesterday", "world",
  "country", "nation", "traveler", "traveller", "tourist", "passenger", "pilot", "spy", "agent", "child", "kid", "baby", "man",
  "woman", "person", "student", "immigrant", "refugee", "diplomat", "citizen",
);
// "<Name>'s passport" (normalized "john smith s passport"), unless the possessor follows a determiner: "a traveler's
// passport", "my neighbour's passport" and "her passport" are props in a scene.
const NAMED_PERSONS_DOCUMENT = words(`(?<!(?:^| )${DETERMINER}(?: [a-z]+)? )(?!${ANYONE} )[a-z]+ s ${DOCUMENT}`);
/** Someone's private data, asked for as "<Name>'s …" as "… of <Name>" is a term ("home address of"); "address" alone is also a speech. */
const PRIVATE_DATA = any(
  "home address", "home addresses", "street address", "phone number", "phone numbers", "telephone number", "mobile number",
  "cell number", "cell phone number", "medical records", "medical record",
);
const ANY_GROUP = any("children", "kids", "people", "men", "women", "patient", "patients", "students", "customers", "employees");
const NAMED_PERSONS_PRIVATE_DATA = words(`(?<!(?:^| )${DETERMINER}(?: [a-z]+)? )(?!(?:${ANYONE}|${ANY_GROUP}) )[a-z]+ s ${PRIVATE_DATA}`);
/** "passport of Canada" is a country's passport, not a person's. */
const COUNTRY = any(
  "afghanistan", "albania", "america", "britain", "great britain", "netherlands", "philippines", "united states",
  "united kingdom", "uae", "algeria", "andorra", "angola", "antigua", "argentina", "armenia", "australia", "austria",
  "azerbaijan", "bahamas", "bahrain", "bangladesh", "barbados", "belarus", "belgium", "belize", "benin", "bhutan",
  "bolivia", "bosnia", "botswana", "brazil", "brunei", "bulgaria", "burkina faso", "burundi", "cambodia", "cameroon",
  "canada", "cape verde", "chad", "chile", "china", "colombia", "comoros", "congo", "costa rica", "croatia", "cuba",
  "cyprus", "czech republic", "czechia", "denmark", "djibouti", "dominica", "dominican republic", "ecuador", "egypt",
  "el salvador", "england", "eritrea", "estonia", "eswatini", "ethiopia", "europe", "fiji", "finland", "france",
  "gabon", "gambia", "georgia", "germany", "ghana", "greece", "grenada", "guatemala", "guinea", "guyana", "haiti",
  "honduras", "hong kong", "hungary", "iceland", "india", "indonesia", "iran", "iraq", "ireland", "israel", "italy",
  "ivory coast", "jamaica", "japan", "jordan", "kazakhstan", "kenya", "kiribati", "korea", "kosovo", "kuwait",
  "kyrgyzstan", "laos", "latvia", "lebanon", "lesotho", "liberia", "libya", "liechtenstein", "lithuania", "luxembourg",
  "madagascar", "malawi", "malaysia", "maldives", "mali", "malta", "mauritania", "mauritius", "mexico", "micronesia",
  "moldova", "monaco", "mongolia", "montenegro", "morocco", "mozambique", "myanmar", "namibia", "nauru", "nepal", "new zealand", "nicaragua", "niger", "nigeria", "north korea", "north macedonia", "norway", "oman", "pakistan", "palau",
  "palestine", "panama", "papua new guinea", "paraguay", "peru", "poland", "portugal", "qatar", "romania", "russia",
  "rwanda", "samoa", "san marino", "saudi arabia", "scotland", "senegal", "serbia", "seychelles", "sierra leone",
  "singapore", "slovakia", "slovenia", "somalia", "south africa", "south korea", "south sudan", "spain", "sri lanka",
  "sudan", "suriname", "sweden", "switzerland", "syria", "taiwan", "tajikistan", "tanzania", "thailand", "togo",
  "tonga", "trinidad", "tunisia", "turkey", "turkmenistan", "tuvalu", "uganda", "uk", "ukraine", "uruguay", "us", "usa",
  "uzbekistan", "vanuatu", "vatican", "venezuela", "vietnam", "wales", "yemen", "zambia", "zimbabwe",
);
const NOT_A_NAME = any("different", "various", "other", "foreign", "multiple", "assorted", "each", "any");
// "passport of John Smith", "passport in the name of …"; "passport of a tourist" and "passport of Canada" pass.
const DOCUMENT_OF_PERSON = words(
  `${DOCUMENT}(?: of ${COUNTRY})? ${any("of", "belonging to", "issued to", "in the name of", "under the name(?: of)?", "with the name(?: of)?", "bearing the name(?: of)?", "named")} (?!(?:${DETERMINER}|${ANYONE}|${NOT_A_NAME}|${COUNTRY})(?: |$))[a-z]+`,
);
const DOCUMENT_DETAILS = words(
  `${DOCUMENT}(?: of ${COUNTRY})? ${any(
    "number", "numbers", "id number", "scan", "scans", "scanned", "photocopy", "copy", "data page", "photo page", "details", "info",
    "information", "mrz",
  )}`,
);
const DOCUMENT_WITH_DETAILS = words(
  `${DOCUMENT}(?: of ${COUNTRY})? with (?:${any(DETERMINER, "real", "full", "visible", "actual", "personal")} )*${any(
    "name", "names", "number", "numbers", "details", "date of birth", "birth date", "birthdate", "address", "signature", "information",
  )}`,
);
// "scan of a passport", "scanned driver's license", "fake passport": a copy or forgery of a real document.
const COPIED_DOCUMENT = words(
  `${any("scan", "scans", "scanned", "photocopy", "photocopied", "copy", "copies", "fake", "forged", "counterfeit", "fraudulent", "falsified")} (?:of )?(?:${DETERMINER} )?(?:[a-z]+ s )?(?:[a-z]+ )?${DOCUMENT}`,
);

export const CONTEXT_RULES: ContextRule[] = [
  { category: "sexual", name: "suggestive with revealing clothes", pattern: SUGGESTIVE, context: REVEALING },
  { category: "sexual", name: "erection", pattern: ERECTION },
  { category: "violence", name: "harming a person", pattern: HARMING_A_PERSON },
  { category: "violence", name: "shooting or beating a victim", pattern: SHOOTING_A_VICTIM },
  { category: "violence", name: "a person killed", pattern: PERSON_KILLED },
  { category: "violence", name: "a dead person", pattern: DEAD_PERSON },
  { category: "violence", name: "cut throat", pattern: THROAT_CUT },
  { category: "violence", name: "brains or head blown", pattern: BRAINS_BLOWN_OUT },
  { category: "hate", name: "people depicted as animals", pattern: DEHUMANIZING },
  { category: "hate", name: "swastika", pattern: SWASTIKA, unless: RELIGIOUS_SWASTIKA },
  { category: "hate", name: "swastika with nazi context", pattern: SWASTIKA, context: NAZI_CONTEXT },
  { category: "hate", name: "ss symbol", pattern: SS_SYMBOL },
  { category: "intellectual_property", name: "marvel brand", pattern: MARVEL_BRAND },
  { category: "intellectual_property", name: "mario", pattern: words("mario"), context: words(any(NINTENDO, "luigi")) },
  { category: "intellectual_property", name: "luigi", pattern: words("luigi"), context: words(any(NINTENDO, "mario")) },
  { category: "intellectual_property", name: "kirby", pattern: words("kirby"), context: words(NINTENDO) },
  { category: "intellectual_property", name: "zelda", pattern: words("zelda"), context: words(any(NINTENDO, "link", "triforce", "ganon")) },
  { category: "intellectual_property", name: "sonic", pattern: words("sonic"), context: words(any("sega", "hedgehog", "tails", "knuckles")) },
  { category: "intellectual_property", name: "elsa", pattern: words("elsa"), context: words(any("frozen", "disney", "arendelle", "olaf", "anna")) },
  { category: "intellectual_property", name: "joker", pattern: words("joker"), context: words(any("batman", "gotham")) },
  // a real place (the Naruto whirlpools), a landmark (Copenhagen's Little Mermaid), a natural phrase (a lion king of the savanna)
  { category: "intellectual_property", name: "naruto", pattern: words("naruto"), context: words(any("anime", "manga", "ninja", "hokage", "konoha", "uzumaki", "sasuke", "kakashi", "itachi", "akatsuki")) },
  { category: "intellectual_property", name: "little mermaid", pattern: words("little mermaid"), context: words(any(DISNEY, "ariel", "ursula", "sebastian", "flounder")) },
  { category: "intellectual_property", name: "lion king", pattern: words("lion king"), context: words(any(DISNEY, "simba", "mufasa", "pumbaa", "timon", "pride rock", "hakuna matata")) },
  { category: "intellectual_property", name: "sailor moon", pattern: words(`(?<!(?:^| )${SAILOR_AS_PERSON} )sailor moon`) },
  { category: "intellectual_property", name: "sailor moon with its franchise", pattern: words("sailor moon"), context: words(SAILOR_MOON_FRANCHISE) },
  // the horny toad and horned lizards are animals
  { category: "sexual", name: "horny", pattern: words("horny(?! (?:toad|toads|lizard|lizards))") },
  { category: "personal_information", name: "named person's document", pattern: NAMED_PERSONS_DOCUMENT },
  { category: "personal_information", name: "named person's private data", pattern: NAMED_PERSONS_PRIVATE_DATA },
  { category: "personal_information", name: "document of a person", pattern: DOCUMENT_OF_PERSON },
  { category: "personal_information", name: "document details", pattern: DOCUMENT_DETAILS },
  { category: "personal_information", name: "document with details", pattern: DOCUMENT_WITH_DETAILS },
  { category: "personal_information", name: "copied or forged document", pattern: COPIED_DOCUMENT },
];
