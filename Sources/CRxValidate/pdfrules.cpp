// Links and layers: the rules of pdfrules.hpp. They run inside the walk, in the isolated child.
#include "rx_validate.h"
#include "pdfrules.hpp"

#include <cctype>
#include <set>
#include <vector>

namespace rx_pdf_rules {
namespace {

const char *const kOpensFiles = "PDF has a link that opens a file on the reader's machine or network";
const char *const kShowsDifferentContent = "PDF shows different content to different readers";

bool name_is(QPDFObjectHandle value, const char *name) { return value.isName() && value.getName() == name; }

// The address as a browser or a reader's URL parser takes it (URL Standard, basic URL parser):
// leading and trailing C0 controls and spaces dropped, tabs and line breaks dropped anywhere, so
// "\tjava\nscript:" is "javascript:" and " //host" is a network path.
std::string normalized(const std::string &uri) {
    size_t start = 0, end = uri.size();
    while (start < end && (unsigned char)uri[start] <= ' ') start++;
    while (end > start && (unsigned char)uri[end - 1] <= ' ') end--;
    std::string out;
    for (size_t i = start; i < end; i++)
        if (uri[i] != '\t' && uri[i] != '\n' && uri[i] != '\r') out += uri[i];
    return out;
}

// The scheme, lower case, or "" when the address has none: letters, digits, '+', '-' or '.'
// before the first ':' (RFC 3986 also wants a letter first; poppler takes any text before a ':'
// for a scheme, so a digit first is judged as a scheme too). "C:\x" has the scheme "c".
std::string scheme_of(const std::string &uri) {
    size_t colon = uri.find(':');
    if (colon == std::string::npos || colon == 0) return "";
    std::string scheme;
    for (size_t i = 0; i < colon; i++) {
        char c = (char)tolower((unsigned char)uri[i]);
        if (!isalnum((unsigned char)c) && c != '+' && c != '-' && c != '.') return "";  // not a scheme: a path
        scheme += c;
    }
    return scheme;
}

bool is_slash(char c) { return c == '/' || c == '\\'; }

// Objects of an array, at most `limit` of them (a hostile array is bounded by the walk's object
// limit already; this keeps each rule's work small too).
std::vector<QPDFObjectHandle> items(QPDFObjectHandle array, int limit = 4096) {
    std::vector<QPDFObjectHandle> out;
    if (!array.isArray()) return out;
    int n = array.getArrayNItems();
    for (int i = 0; i < n && i < limit; i++) out.push_back(array.getArrayItem(i));
    return out;
}

// A visibility expression (/VE) evaluated with every layer on: ["/And" e...], ["/Or" e...],
// ["/Not" e], or a layer (on). Deeper than 32 levels counts as hidden (refused, not guessed).
bool visible_with_every_layer_on(QPDFObjectHandle expression, int depth) {
    if (depth > 32) return false;
    if (!expression.isArray()) return true;  // a layer: on
    std::vector<QPDFObjectHandle> parts = items(expression);
    if (parts.empty() || !parts[0].isName()) return true;
    std::string op = parts[0].getName();
    if (op == "/Not") return parts.size() < 2 || !visible_with_every_layer_on(parts[1], depth + 1);
    bool all = true, any = false;
    for (size_t i = 1; i < parts.size(); i++) {
        bool on = visible_with_every_layer_on(parts[i], depth + 1);
        all = all && on;
        any = any || on;
    }
    return op == "/And" ? all : op == "/Or" ? any : true;
}

// A configuration dictionary (/D or one of /Configs) that hides something by default, or
// switches layers by itself.
std::optional<Found> judge_configuration(QPDFObjectHandle config, const std::string &where) {
    if (!config.isDictionary()) return std::nullopt;
    if (!items(config.getKey("/OFF"), 1).empty())
        return Found{RX_PDF_ACTIVE_CONTENT, kShowsDifferentContent, "a layer hidden in " + where + " (/OFF)"};
    QPDFObjectHandle base = config.getKey("/BaseState");
    if (name_is(base, "/OFF") || name_is(base, "/Unchanged"))
        return Found{RX_PDF_ACTIVE_CONTENT, kShowsDifferentContent, "layers hidden in " + where + " (/BaseState " + base.getName() + ")"};
    if (!items(config.getKey("/AS"), 1).empty())
        return Found{RX_PDF_ACTIVE_CONTENT, kShowsDifferentContent,
                     "layers switched when the file is viewed, printed or exported (/AS in " + where + ")"};
    return std::nullopt;
}

}  // namespace

bool is_relative_link(const std::string &uri) { return scheme_of(normalized(uri)).empty(); }

std::optional<Found> judge_link(const std::string &given, const std::string &kind) {
    std::string uri = normalized(given);
    std::string scheme = scheme_of(uri);
    // A click on http(s), mailto or tel only opens a browser, a mail or a dialler; javascript:
    // runs script in the viewer, and file:, smb: and any other scheme open or fetch files on the
    // reader's machine or network (an SMB address also hands a Windows reader's credentials to
    // that server).
    if (scheme == "javascript") return Found{RX_PDF_ACTIVE_CONTENT, "PDF contains JavaScript", "a javascript: " + kind};
    if (!scheme.empty() && scheme != "http" && scheme != "https" && scheme != "mailto" && scheme != "tel")
        return Found{RX_PDF_ACTIVE_CONTENT, kOpensFiles, "a " + scheme + ": " + kind};
    // A network path is "relative" only in name: opened from disk, a reader resolves it to the
    // host's share (Windows: UNC, SMB), whichever of '/' and '\' it is written with.
    if (scheme.empty() && uri.size() >= 2 && is_slash(uri[0]) && is_slash(uri[1])) {
        bool backslash = uri[0] == '\\' || uri[1] == '\\';
        return Found{RX_PDF_ACTIVE_CONTENT, kOpensFiles,
                     std::string(backslash ? "a \\\\host\\... network-path " : "a //host/... network-path ") + kind};
    }
    return std::nullopt;
}

// poppler (Link.cc, LinkURI): an address whose first '/' or ':' is a ':' is absolute; "www."
// gets "http://"; anything else is appended to the base, with one '/' between them.
std::string resolve_link(const std::string &base, const std::string &link) {
    size_t n = link.find_first_of("/:");
    if (n != std::string::npos && link[n] == ':') return link;
    if (link.compare(0, 4, "www.") == 0) return "http://" + link;
    std::string resolved = base;
    if (!resolved.empty() && resolved.back() != '/' && resolved.back() != '?') resolved += '/';
    resolved += (!link.empty() && link[0] == '/') ? link.substr(1) : link;
    return resolved;
}

std::optional<Found> judge_optional_content(QPDFObjectHandle properties) {
    if (!properties.isDictionary()) return std::nullopt;
    if (auto found = judge_configuration(properties.getKey("/D"), "the default view")) return found;
    // Another configuration is another set of layers a reader may show (Acrobat lists them).
    if (!items(properties.getKey("/Configs"), 1).empty())
        return Found{RX_PDF_ACTIVE_CONTENT, kShowsDifferentContent, "another configuration of its layers (/Configs)"};
    return std::nullopt;
}

std::optional<Found> judge_optional_content_dictionary(QPDFObjectHandle dict) {
    QPDFObjectHandle type = dict.getKey("/Type");
    if (name_is(type, "/OCG")) {
        QPDFObjectHandle usage = dict.getKey("/Usage");
        if (!usage.isDictionary()) return std::nullopt;
        for (const char *key : {"/Print", "/View", "/Export", "/Zoom"}) {
            if (usage.hasKey(key))
                return Found{RX_PDF_ACTIVE_CONTENT, kShowsDifferentContent,
                             std::string("a layer shown or hidden by how the file is read (/Usage ") + key + ")"};
        }
    }
    if (name_is(type, "/OCMD")) {
        QPDFObjectHandle expression = dict.getKey("/VE");
        QPDFObjectHandle policy = dict.getKey("/P");
        bool hidden = expression.isArray() ? !visible_with_every_layer_on(expression, 0)
                                           : (name_is(policy, "/AllOff") || name_is(policy, "/AnyOff"));
        // With no layers named, a membership has no effect (PDF 32000-1, 8.11.2.2).
        bool names_layers = dict.getKey("/OCGs").isDictionary() || !items(dict.getKey("/OCGs"), 1).empty();
        if (hidden && (names_layers || expression.isArray()))
            return Found{RX_PDF_ACTIVE_CONTENT, kShowsDifferentContent,
                         "content hidden while every layer is on, which readers that ignore layers show (/OCMD)"};
    }
    return std::nullopt;
}

std::optional<Found> judge_automatic_action(QPDFObjectHandle action) {
    if (!action.isDictionary()) return std::nullopt;
    // Hiding or showing an annotation, or resetting form fields, when the file opens: a reader
    // that runs the action shows other content than poppler, which checks and previews the file
    // without running it.
    QPDFObjectHandle type = action.getKey("/S");
    if (name_is(type, "/Hide") || name_is(type, "/ResetForm"))
        return Found{RX_PDF_ACTIVE_CONTENT, kShowsDifferentContent, "a " + type.getName() + " action"};
    if (!name_is(type, "/Named")) return std::nullopt;
    QPDFObjectHandle name = action.getKey("/N");
    if (name_is(name, "/Print"))
        return Found{RX_PDF_ACTIVE_CONTENT, "PDF prints by itself, without a click", "a /Named /Print action"};
    // The standard names as they are; any other is a viewer's menu command, named only as such.
    static const std::set<std::string> standard{"/NextPage", "/PrevPage", "/FirstPage", "/LastPage"};
    std::string what = name.isName() && standard.count(name.getName()) ? "a /Named " + name.getName() + " action"
                                                                       : "a /Named action";
    return Found{RX_PDF_ACTIVE_CONTENT, "PDF runs a viewer command by itself, without a click", what};
}

}  // namespace rx_pdf_rules
