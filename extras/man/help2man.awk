# SPDX-License-Identifier: GPL-2.0-or-later
# help2man.awk: a man page from a program's --help text and a template.
#
#   awk -v version=V -v date=D -f help2man.awk HELP TEMPLATE > PAGE
#
# HELP is what the program prints for --help, in the one shape the four
# programs share (mortar, mortard, mortarfsd, mount.mortar):
#   Usage: PROG ...          then lines indented to line up under PROG
#   text                     paragraphs; lines indented by two spaces are
#                            kept as they are (command lists)
#     -x, --long ARG  text   an option: two spaces or more before its text,
#       more text            which goes on in lines indented 12 or more
# TEMPLATE is the page in roff with what no --help says (NAME,
# DESCRIPTION, FILES, SEE ALSO); its lines @SYNOPSIS@, @OPTIONS@ and
# @NOTES@ become the usage lines, the options and the other paragraphs of
# HELP, and @VERSION@ and @DATE@ anywhere become version and date. So a
# page cannot list an option the program does not, or miss one it does.

# Text for roff: backslashes, hyphens (minus signs in options), and a
# leading dot or quote, which roff would read as a request.
function esc(s) {
    gsub(/\\/, "\\e", s)
    gsub(/-/, "\\-", s)
    if (s ~ /^[.']/)
        s = "\\&" s
    return s
}

function flush_para() {
    if (para != "") {
        notes = notes ".PP\n" esc(para) "\n"
        para = ""
    }
}

function flush_verbatim() {
    if (verb != "") {
        notes = notes ".PP\n.nf\n" verb ".fi\n"
        verb = ""
    }
}

function flush_option() {
    if (opt_term != "") {
        opts = opts ".TP\n.B " esc(opt_term) "\n" esc(opt_text) "\n"
        opt_term = ""
    }
}

# Pass 1: the help text.
FNR == NR {
    line = $0
    if (line ~ /^Usage: /) {
        in_usage = 1
        line = substr(line, 8)
    } else if (in_usage && line ~ /^       /) {
        line = substr(line, 8)
    } else {
        in_usage = 0
    }
    if (in_usage) {
        # The program's name in bold, the rest as it is.
        split(line, w, " ")
        rest = substr(line, length(w[1]) + 1)
        if (prog == "")
            prog = w[1]
        if (w[1] == prog || w[1] == "mount")
            usage = usage "\\fB" esc(w[1]) "\\fR" esc(rest) "\n"
        else
            usage = usage esc(line) "\n"
        next
    }
    if (line ~ /^ {1,8}-/) {
        flush_para()
        flush_verbatim()
        flush_option()
        sub(/^ +/, "", line)
        # The term ends at two spaces; a term alone on its line has its
        # text on the next ones.
        split_at = match(line, /  +/)
        if (split_at > 0) {
            opt_term = substr(line, 1, split_at - 1)
            opt_text = substr(line, split_at + RLENGTH)
        } else {
            opt_term = line
            opt_text = ""
        }
        next
    }
    if (opt_term != "" && line ~ /^ {12,}[^ ]/) {
        sub(/^ +/, "", line)
        opt_text = opt_text (opt_text == "" ? "" : " ") line
        next
    }
    flush_option()
    if (line ~ /^ *$/) {
        flush_para()
        flush_verbatim()
    } else if (line ~ /^  /) {
        flush_para()
        verb = verb esc(substr(line, 3)) "\n"
    } else {
        flush_verbatim()
        para = para (para == "" ? "" : " ") line
    }
    next
}

# Pass 2: the template.
FNR == 1 {
    flush_option()
    flush_para()
    flush_verbatim()
}

$0 == "@SYNOPSIS@" {
    printf ".nf\n%s.fi\n", usage
    next
}

$0 == "@OPTIONS@" {
    printf "%s", opts
    next
}

$0 == "@NOTES@" {
    printf "%s", notes
    next
}

{
    gsub(/@VERSION@/, version)
    gsub(/@DATE@/, date)
    print
}
