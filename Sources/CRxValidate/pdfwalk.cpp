// The object walk: every object of a PDF, read with qpdf, checked for active content, embedded
// files and damage. poppler-glib (pdf.c) only shows what its renderer exposes (pages, links,
// a "has JavaScript" flag), so a /Launch action in a page's /AA inside a compressed object
// stream, an XFA script or an embedded file passes it unseen. qpdf parses the file itself:
// object streams, cross-reference streams, every incremental update, names with #xx escapes
// (decoded by qpdf's parser) and stream filters.
//
// qpdf runs with recovery off: a cross-reference table it would have to reconstruct is damage,
// and so is any warning it gives while the walk reads objects and decodes streams. Everything is
// bounded: objects per revision, revisions, nesting depth, decoded bytes per stream and in all.
// The walk runs in the isolated child (ParserChild), under its rlimits and sandbox.
#include "rx_validate.h"

// qpdf 11 headers warn unless told which PointerHolder API the includer expects: the current one.
#define POINTERHOLDER_TRANSITION 4
#include <qpdf/Pipeline.hh>
#include <qpdf/QPDF.hh>
#include <qpdf/QPDFExc.hh>
#include <qpdf/QPDFObjectHandle.hh>

#include "pdfrules.hpp"

#include <cctype>
#include <cstdio>
#include <cstring>
#include <exception>
#include <memory>
#include <set>
#include <string>
#include <vector>

namespace {

// Thrown to stop the walk at the first finding.
struct Finding {
    int refusal;
    std::string message;
};

// Counts decoded bytes (keeping the first `keep` of them) and stops the decoder once a stream
// goes over its budget: throwing from write() ends qpdf's filter chain, so a compression bomb is
// never inflated past the limit.
class BoundedSink : public Pipeline {
  public:
    struct Over : std::exception {
        const char *what() const noexcept override { return "decoded stream over the limit"; }
    };

    BoundedSink(uint64_t limit, size_t keep) : Pipeline("rxvault bounded sink", nullptr), limit_(limit), keep_(keep) {}

    void write(unsigned char const *data, size_t len) override {
        if (len > limit_ - count_) { over = true; throw Over(); }
        count_ += len;
        if (kept.size() < keep_) kept.append(reinterpret_cast<const char *>(data), std::min(len, keep_ - kept.size()));
    }
    void finish() override {}

    uint64_t count() const { return count_; }
    bool over = false;
    std::string kept;

  private:
    uint64_t limit_;
    uint64_t count_ = 0;
    size_t keep_;
};

// "256 MiB", "1 GiB", "64 bytes": the limits as the messages state them.
std::string bytes_text(uint64_t n) {
    if (n >= (1ull << 30) && n % (1ull << 30) == 0) return std::to_string(n >> 30) + " GiB";
    if (n >= (1ull << 20) && n % (1ull << 20) == 0) return std::to_string(n >> 20) + " MiB";
    if (n >= (1ull << 10) && n % (1ull << 10) == 0) return std::to_string(n >> 10) + " KiB";
    return std::to_string(n) + " bytes";
}

std::string object_label(QPDFObjGen og) {
    return og.getObj() > 0 ? "object " + std::to_string(og.getObj()) : "the trailer";
}

// "<script", "<xfa:script" or "<SCRIPT" followed by a space, '>' or '/'.
bool has_element(const std::string &xml, const char *name) {
    size_t n = strlen(name);
    for (size_t i = 0; i < xml.size(); i++) {
        if (xml[i] != '<') continue;
        size_t j = i + 1;
        size_t colon = j;
        while (colon < xml.size() && colon - j < 32 && (isalnum((unsigned char)xml[colon]) || xml[colon] == '-' || xml[colon] == '_'
                                                        || xml[colon] == '.')) colon++;
        if (colon < xml.size() && xml[colon] == ':') j = colon + 1;
        if (xml.size() - j < n + 1 || strncasecmp(xml.data() + j, name, n) != 0) continue;
        char next = xml[j + n];
        if (next == '>' || next == '/' || next == ' ' || next == '\t' || next == '\n' || next == '\r') return true;
    }
    return false;
}

bool has_script_element(const std::string &xml) { return has_element(xml, "script"); }

class Walker {
  public:
    Walker(QPDF &pdf, const rx_pdf_walk_limits &limits, uint64_t &decoded_total)
        : pdf_(pdf), limits_(limits), decoded_total_(decoded_total) {}

    // Warnings qpdf gave outside stream decoding (damage), and while decoding a stream it decoded
    // whole (notes): see `decode`.
    std::vector<QPDFExc> file_warnings;
    std::vector<std::string> notes;

    void walk() {
        if (pdf_.getObjectCount() > (size_t)limits_.max_objects) too_many_objects();
        std::vector<QPDFObjectHandle> objects = pdf_.getAllObjects();
        if (objects.size() > (size_t)limits_.max_objects) too_many_objects();
        // Document JavaScript is the /JavaScript entry of the catalog's /Names (run when the
        // document opens); a /JavaScript key anywhere else is only a name.
        QPDFObjectHandle root = pdf_.getRoot();
        QPDFObjectHandle names = root.getKey("/Names");
        current_ = names.isIndirect() ? names.getObjGen() : root.getObjGen();
        if (names.isDictionary() && names.hasKey("/JavaScript"))
            found(RX_PDF_ACTIVE_CONTENT, "PDF contains JavaScript", "a /JavaScript name tree");
        // The base address every relative link resolves against, and the layers of optional
        // content: read from the catalog before any object, as a reader does.
        QPDFObjectHandle uri = root.getKey("/URI");
        QPDFObjectHandle base = uri.isDictionary() ? uri.getKey("/Base") : QPDFObjectHandle::newNull();
        current_ = uri.isIndirect() ? uri.getObjGen() : root.getObjGen();
        if (base.isString()) {
            base_ = base.getStringValue();
            has_base_ = true;
            if (auto refused = rx_pdf_rules::judge_link(base_, "/URI /Base")) report(*refused);
        }
        QPDFObjectHandle layers = root.getKey("/OCProperties");
        current_ = layers.isIndirect() ? layers.getObjGen() : root.getObjGen();
        if (layers.isDictionary()) {
            has_layers_ = true;
            if (auto refused = rx_pdf_rules::judge_optional_content(layers)) report(*refused);
        }
        current_ = QPDFObjGen();
        visit(pdf_.getTrailer(), 0);
        for (QPDFObjectHandle &object : objects) {
            current_ = object.getObjGen();
            visit(object, 0, true);
        }
        // Builds the page list the way a reader does; qpdf reports a loop in the page tree.
        pdf_.getAllPages();
    }

  private:
    QPDF &pdf_;
    const rx_pdf_walk_limits &limits_;
    uint64_t &decoded_total_;
    QPDFObjGen current_;
    std::set<QPDFObjGen> automatic_seen_;
    std::set<QPDFObjGen> xfa_seen_;
    std::string base_;
    bool has_base_ = false;
    bool has_layers_ = false;

    // "PDF contains JavaScript (a /JavaScript action in object 50)".
    [[noreturn]] void found(int refusal, const std::string &headline, const std::string &what) {
        throw Finding{refusal, headline + " (" + what + " in " + object_label(current_) + ")"};
    }

    [[noreturn]] void report(const rx_pdf_rules::Found &refused, const std::string &where = "") {
        found(refused.refusal, refused.headline, refused.what + where);
    }

    // A link's address, alone and (when relative) resolved against the document's base
    // address, as poppler resolves it: both must pass.
    void check_link(const std::string &link) {
        if (auto refused = rx_pdf_rules::judge_link(link, "link")) report(*refused);
        if (!has_base_ || !rx_pdf_rules::is_relative_link(link)) return;
        std::string resolved = rx_pdf_rules::resolve_link(base_, link);
        if (auto refused = rx_pdf_rules::judge_link(resolved, "relative link resolved against the /URI /Base"))
            report(*refused);
    }

    [[noreturn]] void too_many_objects() {
        throw Finding{RX_PDF_LIMIT, "PDF has more than " + std::to_string(limits_.max_objects) + " objects"};
    }

    void visit(QPDFObjectHandle object, int depth, bool top = false) {
        if (depth > limits_.max_depth)
            found(RX_PDF_LIMIT, "PDF nests arrays or dictionaries more than " + std::to_string(limits_.max_depth) + " deep", "nesting");
        // An indirect reference is walked as its own object (every object is), not here again.
        if (!top && object.isIndirect()) return;
        if (object.isArray()) {
            int n = object.getArrayNItems();
            for (int i = 0; i < n; i++) visit(object.getArrayItem(i), depth + 1);
        } else if (object.isStream()) {
            QPDFObjectHandle dict = object.getDict();
            check_dictionary(dict, depth);
            decode(object);
        } else if (object.isDictionary()) {
            check_dictionary(object, depth);
        }
    }

    static bool name_is(QPDFObjectHandle value, const char *name) { return value.isName() && value.getName() == name; }

    void check_dictionary(QPDFObjectHandle dict, int depth) {
        QPDFObjectHandle s = dict.getKey("/S");
        if (s.isName()) check_action_type(s.getName());
        QPDFObjectHandle subtype = dict.getKey("/Subtype");
        QPDFObjectHandle type = dict.getKey("/Type");
        if (name_is(subtype, "/FileAttachment"))
            found(RX_PDF_EMBEDDED_FILE, "PDF has a file attached to it", "a /FileAttachment annotation");
        if (name_is(subtype, "/RichMedia"))
            found(RX_PDF_ACTIVE_CONTENT, "PDF contains rich media (Flash or video)", "a /RichMedia annotation");
        // 3D models run their own JavaScript (/OnInstantiate in the /3DD stream); movies, sounds
        // and screens play media, some of them by themselves.
        if (name_is(subtype, "/3D"))
            found(RX_PDF_ACTIVE_CONTENT, "PDF contains a 3D model, which can run JavaScript", "a /3D annotation");
        if (name_is(subtype, "/Movie") || name_is(subtype, "/Sound") || name_is(subtype, "/Screen"))
            found(RX_PDF_ACTIVE_CONTENT, "PDF contains media that can play by itself", "a " + subtype.getName() + " annotation");
        if (name_is(s, "/URI")) {
            QPDFObjectHandle uri = dict.getKey("/URI");
            if (uri.isString()) check_link(uri.getStringValue());
        }
        if (has_layers_) {
            if (auto refused = rx_pdf_rules::judge_optional_content_dictionary(dict)) report(*refused);
        }
        if (name_is(s, "/Thread") && dict.hasKey("/F"))
            found(RX_PDF_ACTIVE_CONTENT, "PDF contains an action that opens another PDF file", "a /Thread action with /F");
        if (name_is(type, "/EmbeddedFile"))
            found(RX_PDF_EMBEDDED_FILE, "PDF has an embedded file", "an /EmbeddedFile stream");
        for (const std::string &key : dict.getKeys()) {
            // A script is the /JS of an action (a dictionary with /S, whatever its type says);
            // a font, a resource or private data merely named /JS runs nothing.
            if (key == "/JS" && (dict.hasKey("/S") || name_is(type, "/Action")))
                found(RX_PDF_ACTIVE_CONTENT, "PDF contains JavaScript", "a /JS script");
            if (key == "/EmbeddedFiles")
                found(RX_PDF_EMBEDDED_FILE, "PDF has embedded files", "an /EmbeddedFiles name tree");
            if (key == "/EF")
                found(RX_PDF_EMBEDDED_FILE, "PDF has an embedded file", "a file specification with /EF");
            if (key == "/3DD" || key == "/OnInstantiate")
                found(RX_PDF_ACTIVE_CONTENT, "PDF contains a 3D model, which can run JavaScript", "a " + key + " entry");
            if (key == "/RichMediaContent" || key == "/RichMediaSettings")
                found(RX_PDF_ACTIVE_CONTENT, "PDF contains rich media (Flash or video)", "a " + key + " entry");
            QPDFObjectHandle value = dict.getKey(key);
            if (key == "/XFA") check_xfa(value);
            if (key == "/OpenAction") check_automatic(value, "/OpenAction", 0);
            if (key == "/AA" && value.isDictionary()) {
                for (const std::string &trigger : value.getKeys())
                    check_automatic(value.getKey(trigger), "/AA " + trigger, 0);
            }
            visit(value, depth + 1);
        }
    }

    // Action types that run code, fetch or send data, open other files or play media.
    void check_action_type(const std::string &type) {
        if (type == "/JavaScript") found(RX_PDF_ACTIVE_CONTENT, "PDF contains JavaScript", "a /JavaScript action");
        if (type == "/Launch") found(RX_PDF_ACTIVE_CONTENT, "PDF contains a launch action that could start a program", "a /Launch action");
        if (type == "/ImportData") found(RX_PDF_ACTIVE_CONTENT, "PDF contains an action that reads another file into its form", "an /ImportData action");
        if (type == "/SubmitForm") found(RX_PDF_ACTIVE_CONTENT, "PDF contains an action that sends form data to a server", "a /SubmitForm action");
        if (type == "/GoToR") found(RX_PDF_ACTIVE_CONTENT, "PDF contains an action that opens another PDF file", "a /GoToR action");
        if (type == "/GoToE") found(RX_PDF_ACTIVE_CONTENT, "PDF contains an action that opens an embedded PDF file", "a /GoToE action");
        if (type == "/Rendition") found(RX_PDF_ACTIVE_CONTENT, "PDF contains an action that plays media or runs a script", "a /Rendition action");
        if (type == "/RichMediaExecute") found(RX_PDF_ACTIVE_CONTENT, "PDF contains rich media (Flash or video)", "a /RichMediaExecute action");
        // A click that switches layers shows other content than the page as stored (and as
        // poppler checked and previewed it).
        if (type == "/SetOCGState")
            found(RX_PDF_ACTIVE_CONTENT, "PDF shows different content to different readers", "a /SetOCGState action, which switches layers,");
        if (type == "/Movie" || type == "/Sound")
            found(RX_PDF_ACTIVE_CONTENT, "PDF contains an action that plays media", "a " + type + " action");
    }

    // An action that runs by itself, when the document opens or a page is shown (/OpenAction,
    // /AA and their /Next chains). Opening a web address without a click tells a server that
    // (and when, and from where) the prescription was opened: refused. A /URI action on a link
    // annotation waits for a click and is accepted (SECURITY.md, "Attachment checker").
    void check_automatic(QPDFObjectHandle action, const std::string &where, int hops) {
        if (hops > limits_.max_depth) found(RX_PDF_LIMIT, "PDF has an action chain over " + std::to_string(limits_.max_depth) + " long", "/Next");
        // An action object reached again (from another /AA, or by /Next arrays that share their
        // targets) was checked already: without this, shared targets grow the work exponentially.
        if (action.isIndirect() && !automatic_seen_.insert(action.getObjGen()).second) return;
        if (action.isArray()) {
            int n = action.getArrayNItems();
            for (int i = 0; i < n && i < 4096; i++) check_automatic(action.getArrayItem(i), where, hops + 1);
            return;
        }
        if (!action.isDictionary()) return;
        // Where an action runs by itself, a /JS is a script even without /S (lenient viewers).
        if (action.hasKey("/JS")) found(RX_PDF_ACTIVE_CONTENT, "PDF contains JavaScript", "a /JS script in " + where + ",");
        if (name_is(action.getKey("/S"), "/URI"))
            found(RX_PDF_ACTIVE_CONTENT, "PDF opens a web address by itself, without a click", "a /URI action in " + where + ",");
        if (auto refused = rx_pdf_rules::judge_automatic_action(action)) report(*refused, " in " + where + ",");
        if (action.hasKey("/Next")) check_automatic(action.getKey("/Next"), where, hops + 1);
    }

    // An XFA form is a stream of XML or an array of (name, stream) pairs; a <script> element in
    // any part is JavaScript (or FormCalc) the viewer runs.
    void check_xfa(QPDFObjectHandle xfa) {
        std::vector<QPDFObjectHandle> parts;
        if (xfa.isStream()) parts.push_back(xfa);
        if (xfa.isArray()) {
            int n = xfa.getArrayNItems();
            for (int i = 0; i < n && i < 4096; i++)
                if (xfa.getArrayItem(i).isStream()) parts.push_back(xfa.getArrayItem(i));
        }
        for (QPDFObjectHandle &part : parts) {
            // Each stream once, however many forms or array slots name it, and against the
            // same decoded-bytes budget as every other stream.
            if (!xfa_seen_.insert(part.getObjGen()).second) continue;
            std::string xml = decode(part, limits_.max_stream_bytes);
            current_ = part.getObjGen();
            if (has_script_element(xml))
                found(RX_PDF_ACTIVE_CONTENT, "PDF contains JavaScript", "a <script> element in the XFA form,");
            // Elements that act without a script: send the form, run a web service or a
            // database query, connect to a data source (an initialize event can fire them).
            for (const char *element : {"submit", "execute", "connectionSet"}) {
                if (has_element(xml, element))
                    found(RX_PDF_ACTIVE_CONTENT, "PDF contains a form that sends or fetches data",
                          std::string(element[0] == 'e' ? "an <" : "a <") + element + "> element in the XFA form,");
            }
        }
    }

    // Every stream is decoded (qpdf's "specialized" level: Flate, LZW, ASCII85, ASCIIHex and
    // RunLength; the general-purpose level would leave RunLength, and an XFA script behind it,
    // undecoded) so that a broken one is found here, with bounded output and a budget for the
    // whole file. Image codecs (DCT, JPX, JBIG2, CCITT) are left to poppler's render.
    // Returns the first `keep` decoded bytes (for the XFA check); counts all of them.
    std::string decode(QPDFObjectHandle stream, size_t keep = 0) {
        uint64_t left = limits_.max_total_stream_bytes - decoded_total_;
        uint64_t limit = std::min<uint64_t>(limits_.max_stream_bytes, left);
        BoundedSink sink(limit, keep);
        bool attempted = false;
        // Warnings so far belong to the file, not this stream: set aside (getWarnings clears the
        // list) and judged as damage at the end, as before.
        for (QPDFExc &w : pdf_.getWarnings()) file_warnings.push_back(w);
        bool ok = stream.pipeStreamData(&sink, &attempted, 0, qpdf_dl_specialized, true, false);
        // What qpdf said while decoding a stream it decoded whole ("input stream is complete but
        // output may still be valid": zlib data without its checksum, as some form fillers write)
        // is what `qpdf --check` counts as no error: a note, not damage. A stream it could not
        // decode stays damage (below).
        std::vector<QPDFExc> decoding = pdf_.getWarnings();
        if (ok)
            for (QPDFExc &w : decoding) notes.push_back(w.getMessageDetail() + " (the stream of " + object_label(stream.getObjGen()) + ")");
        decoded_total_ += sink.count();
        if (sink.over) {
            current_ = stream.getObjGen();
            if (limit < limits_.max_stream_bytes)
                throw Finding{RX_PDF_LIMIT, "PDF streams decompress to more than " + bytes_text(limits_.max_total_stream_bytes) + " in all"};
            found(RX_PDF_LIMIT, "PDF has a stream that decompresses to more than " + bytes_text(limits_.max_stream_bytes), "the stream");
        }
        if (!ok) throw Finding{RX_PDF_DAMAGED, "PDF is damaged: the stream of " + object_label(stream.getObjGen()) + " cannot be decoded"};
        return std::move(sink.kept);
    }
};

// The first warning qpdf collected, without the "<description>: " prefix it puts in front.
std::string first_warning(QPDF &pdf) {
    std::vector<QPDFExc> warnings = pdf.getWarnings();
    if (warnings.empty()) return "";
    return warnings.front().getMessageDetail();
}

void check_warnings(QPDF &pdf, const char *when, const std::vector<QPDFExc> &earlier = {}) {
    std::string warning;
    if (!earlier.empty()) warning = earlier.front().getMessageDetail();
    else if (pdf.anyWarnings()) warning = first_warning(pdf);
    else return;
    throw Finding{RX_PDF_DAMAGED, std::string("PDF is damaged: qpdf reports \"") + warning + "\" " + when};
}

// One revision: the whole file, or the part up to an earlier update's %%EOF.
void walk_revision(const uint8_t *data, size_t length, const rx_pdf_walk_limits &limits, uint64_t &decoded_total,
                   long long *previous_xref, std::vector<std::string> &notes) {
    QPDF pdf;
    pdf.setSuppressWarnings(true);
    pdf.setAttemptRecovery(false);
    try {
        pdf.processMemoryFile("attachment", reinterpret_cast<const char *>(data), length, nullptr);
    } catch (QPDFExc &e) {
        if (e.getErrorCode() == qpdf_e_password) throw Finding{RX_PDF_ENCRYPTED, "PDF is password-protected"};
        throw Finding{RX_PDF_DAMAGED, "PDF is damaged: " + e.getMessageDetail()};
    }
    check_warnings(pdf, "while reading its cross-reference table");
    if (pdf.isEncrypted()) throw Finding{RX_PDF_ENCRYPTED, "PDF is encrypted; only unencrypted PDFs are accepted"};
    Walker walker(pdf, limits, decoded_total);
    try {
        walker.walk();
    } catch (QPDFExc &e) {
        throw Finding{RX_PDF_DAMAGED, "PDF is damaged: " + e.getMessageDetail()};
    }
    check_warnings(pdf, "while reading its objects", walker.file_warnings);
    notes.insert(notes.end(), walker.notes.begin(), walker.notes.end());
    QPDFObjectHandle prev = pdf.getTrailer().getKey("/Prev");
    *previous_xref = prev.isInteger() ? prev.getIntValue() : -1;
}

int refuse(rx_pdf_result *result, int refusal, const std::string &message) {
    result->refusal = refusal;
    snprintf(result->message, RX_MESSAGE_SIZE, "%s", message.c_str());
    return refusal;
}

const uint8_t *find(const uint8_t *from, const uint8_t *end, const char *needle) {
    size_t n = strlen(needle);
    for (const uint8_t *p = from; p + n <= end; p++)
        if (memcmp(p, needle, n) == 0) return p;
    return nullptr;
}

}  // namespace

extern "C" int rx_pdf_walk(const uint8_t *data, size_t length, const rx_pdf_walk_limits *limits, rx_pdf_result *result) {
    try {
        uint64_t decoded_total = 0;
        long long previous = -1;
        std::vector<std::string> notes;
        walk_revision(data, length, *limits, decoded_total, &previous, notes);
        // Earlier revisions: each /Prev names the cross-reference section of the one before; that
        // revision ends at the first %%EOF after it. A reader that shows earlier revisions (or
        // repairs the file) sees their objects, so they are walked too.
        std::set<size_t> walked{length};
        for (int revisions = 1; previous >= 0; revisions++) {
            if (revisions >= limits->max_revisions)
                return refuse(result, RX_PDF_LIMIT, "PDF has over " + std::to_string(limits->max_revisions) + " revisions (the file and its incremental updates)");
            if ((unsigned long long)previous >= length)
                return refuse(result, RX_PDF_DAMAGED, "PDF is damaged: an update's /Prev points past the end of the file");
            const uint8_t *eof = find(data + previous, data + length, "%%EOF");
            if (!eof) return refuse(result, RX_PDF_DAMAGED, "PDF is damaged: an earlier revision has no %%EOF");
            size_t end = (size_t)(eof + 5 - data);
            while (end < length && (data[end] == '\r' || data[end] == '\n')) end++;
            // A linearized file's first-page trailer points forward at the main table, which ends
            // at the file's own end: nothing earlier to walk.
            if (walked.count(end) || end >= length) break;
            walked.insert(end);
            walk_revision(data, end, *limits, decoded_total, &previous, notes);
        }
        // The same stream in several revisions is one note.
        std::set<std::string> distinct(notes.begin(), notes.end());
        result->notes = (int)distinct.size();
        if (!notes.empty()) snprintf(result->note, RX_MESSAGE_SIZE, "%s", notes.front().c_str());
        return 0;
    } catch (Finding &finding) {
        return refuse(result, finding.refusal, finding.message);
    } catch (QPDFExc &e) {
        return refuse(result, RX_PDF_DAMAGED, "PDF is damaged: " + e.getMessageDetail());
    } catch (std::bad_alloc &) {
        return refuse(result, RX_PDF_LIMIT, "PDF needs more memory to check than the file checker may use");
    } catch (std::exception &e) {
        return refuse(result, RX_PDF_DAMAGED, std::string("PDF is damaged: ") + e.what());
    } catch (...) {
        return refuse(result, RX_PDF_DAMAGED, "PDF is damaged: qpdf cannot read it");
    }
}
