#include "propose/search/expr.h"

#include <cctype>
#include <cmath>
#include <limits>

namespace ratchet {

namespace {
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

struct Token {
  enum class Kind { kNumber, kString, kName, kOp, kEnd } kind;
  std::string text;
  double number = 0;
  size_t pos = 0;
};

bool Tokenize(const std::string& s, std::vector<Token>* out, std::string* err) {
  size_t i = 0;
  while (i < s.size()) {
    const char c = s[i];
    if (std::isspace(static_cast<unsigned char>(c))) {
      ++i;
      continue;
    }
    Token t;
    t.pos = i;
    if (std::isdigit(static_cast<unsigned char>(c)) ||
        (c == '.' && i + 1 < s.size() && std::isdigit(static_cast<unsigned char>(s[i + 1])))) {
      size_t used = 0;
      try {
        t.number = std::stod(s.substr(i), &used);
      } catch (...) {
        *err = "bad number at column " + std::to_string(i + 1);
        return false;
      }
      t.kind = Token::Kind::kNumber;
      t.text = s.substr(i, used);
      i += used;
    } else if (std::isalpha(static_cast<unsigned char>(c)) || c == '_') {
      size_t j = i;
      while (j < s.size() && (std::isalnum(static_cast<unsigned char>(s[j])) || s[j] == '_')) ++j;
      t.kind = Token::Kind::kName;
      t.text = s.substr(i, j - i);
      i = j;
    } else if (c == '"' || c == '\'') {
      size_t j = i + 1;
      while (j < s.size() && s[j] != c) ++j;
      if (j >= s.size()) {
        *err = "unterminated string at column " + std::to_string(i + 1);
        return false;
      }
      t.kind = Token::Kind::kString;
      t.text = s.substr(i + 1, j - i - 1);
      i = j + 1;
    } else {
      static const char* kOps[] = {"||", "&&", "==", "!=", "<=", ">=", "<", ">", "+",
                                   "-",  "*",  "/",  "%",  "!",  "(",  ")", ","};
      bool found = false;
      for (const char* op : kOps) {
        const std::string o(op);
        if (s.compare(i, o.size(), o) == 0) {
          t.kind = Token::Kind::kOp;
          t.text = o;
          i += o.size();
          found = true;
          break;
        }
      }
      if (!found) {
        *err = std::string("unexpected '") + c + "' at column " + std::to_string(i + 1);
        return false;
      }
    }
    out->push_back(t);
  }
  out->push_back(Token{Token::Kind::kEnd, "", 0, s.size()});
  return true;
}
}  // namespace

// Recursive descent, one function per precedence level.
class ExprParser {
  static Expr::Node MakeNode(Expr::Node::Kind kind, const std::string& op = "") {
    Expr::Node n;
    n.kind = kind;
    n.op = op;
    return n;
  }

 public:
  ExprParser(std::vector<Token> tokens, const Expr::Resolver& resolve, Expr* expr)
      : tokens_(std::move(tokens)), resolve_(resolve), expr_(expr) {}

  bool Run(std::string* err) {
    int root = Or();
    if (root >= 0 && Peek().kind != Token::Kind::kEnd) {
      Fail("unexpected '" + Peek().text + "'");
      root = -1;
    }
    if (root < 0) {
      *err = error_;
      return false;
    }
    expr_->root_ = root;
    return true;
  }

 private:
  const Token& Peek() const { return tokens_[pos_]; }
  bool IsOp(const char* op) const {
    const Token& t = Peek();
    return (t.kind == Token::Kind::kOp && t.text == op);
  }
  bool IsWord(const char* w) const { return Peek().kind == Token::Kind::kName && Peek().text == w; }
  int Fail(const std::string& message) {
    if (error_.empty()) {
      error_ = message + " at column " + std::to_string(Peek().pos + 1);
    }
    return -1;
  }
  int Add(Expr::Node node) {
    expr_->nodes_.push_back(std::move(node));
    return static_cast<int>(expr_->nodes_.size()) - 1;
  }
  int Binary(const std::string& op, int a, int b) {
    if (a < 0 || b < 0) return -1;
    Expr::Node n = MakeNode(Expr::Node::Kind::kBinary, op);
    n.args = {a, b};
    return Add(n);
  }

  int Or() {
    int left = And();
    while (left >= 0 && (IsOp("||") || IsWord("or"))) {
      ++pos_;
      left = Binary("||", left, And());
    }
    return left;
  }
  int And() {
    int left = Compare();
    while (left >= 0 && (IsOp("&&") || IsWord("and"))) {
      ++pos_;
      left = Binary("&&", left, Compare());
    }
    return left;
  }
  int Compare() {
    int left = Sum();
    for (const char* op : {"==", "!=", "<=", ">=", "<", ">"}) {
      if (left >= 0 && IsOp(op)) {
        ++pos_;
        return Binary(op, left, Sum());
      }
    }
    return left;
  }
  int Sum() {
    int left = Product();
    while (left >= 0 && (IsOp("+") || IsOp("-"))) {
      const std::string op = tokens_[pos_++].text;
      left = Binary(op, left, Product());
    }
    return left;
  }
  int Product() {
    int left = Unary();
    while (left >= 0 && (IsOp("*") || IsOp("/") || IsOp("%"))) {
      const std::string op = tokens_[pos_++].text;
      left = Binary(op, left, Unary());
    }
    return left;
  }
  int Unary() {
    if (IsOp("-") || IsOp("!") || IsWord("not")) {
      const std::string op = IsOp("-") ? "-" : "!";
      ++pos_;
      const int arg = Unary();
      if (arg < 0) return -1;
      Expr::Node n = MakeNode(Expr::Node::Kind::kUnary, op);
      n.args = {arg};
      return Add(n);
    }
    return Primary();
  }
  int Primary() {
    const Token t = Peek();
    switch (t.kind) {
      case Token::Kind::kNumber: {
        ++pos_;
        Expr::Node n = MakeNode(Expr::Node::Kind::kNumber);
        n.number = t.number;
        return Add(n);
      }
      case Token::Kind::kString: {
        ++pos_;
        Expr::Node n = MakeNode(Expr::Node::Kind::kString);
        n.text = t.text;
        return Add(n);
      }
      case Token::Kind::kName:
        return Name();
      case Token::Kind::kOp:
        if (t.text == "(") {
          ++pos_;
          const int inner = Or();
          if (inner < 0) return -1;
          if (!IsOp(")")) return Fail("expected ')'");
          ++pos_;
          return inner;
        }
        return Fail("unexpected '" + t.text + "'");
      case Token::Kind::kEnd:
        return Fail("unexpected end of expression");
    }
    return -1;
  }
  int Name() {
    const Token t = tokens_[pos_++];
    if (t.text == "true" || t.text == "True" || t.text == "false" || t.text == "False") {
      Expr::Node n = MakeNode(Expr::Node::Kind::kNumber);
      n.number = (t.text == "true" || t.text == "True") ? 1 : 0;
      return Add(n);
    }
    if (IsOp("(")) {
      static const std::pair<const char*, size_t> kFunctions[] = {
          {"abs", 1}, {"log2", 1}, {"min", 2}, {"max", 2}};
      size_t arity = 0;
      for (const auto& [name, n] : kFunctions) {
        if (t.text == name) arity = n;
      }
      if (arity == 0) {
        --pos_;
        return Fail("unknown function '" + t.text + "' (known: abs, log2, min, max)");
      }
      ++pos_;
      Expr::Node n = MakeNode(Expr::Node::Kind::kCall, t.text);
      for (size_t i = 0; i < arity; ++i) {
        if (i > 0) {
          if (!IsOp(",")) return Fail("expected ','");
          ++pos_;
        }
        const int arg = Or();
        if (arg < 0) return -1;
        n.args.push_back(arg);
      }
      if (!IsOp(")")) return Fail("expected ')'");
      ++pos_;
      return Add(n);
    }
    const int var = resolve_(t.text);
    if (var < 0) {
      --pos_;
      return Fail("unknown parameter '" + t.text + "'");
    }
    Expr::Node n = MakeNode(Expr::Node::Kind::kVar);
    n.var = var;
    n.text = t.text;
    return Add(n);
  }

  std::vector<Token> tokens_;
  size_t pos_ = 0;
  const Expr::Resolver& resolve_;
  Expr* expr_;
  std::string error_;
};

bool Expr::Parse(const std::string& text, const Resolver& resolve, Expr* out, std::string* err) {
  *out = Expr();
  out->text_ = text;
  std::vector<Token> tokens;
  std::string message;
  if (!Tokenize(text, &tokens, &message) || !ExprParser(tokens, resolve, out).Run(&message)) {
    *err = "constraint '" + text + "': " + message;
    return false;
  }
  return true;
}

ExprValue Expr::Eval(const std::vector<ExprValue>& vars) const {
  if (root_ < 0) return ExprValue::Number(kNaN);
  return EvalNode(root_, vars);
}

bool Expr::Holds(const std::vector<ExprValue>& vars) const {
  const ExprValue v = Eval(vars);
  if (v.is_string) return !v.text.empty();
  return std::isfinite(v.number) && v.number != 0;
}

std::vector<int> Expr::Variables() const {
  std::vector<int> out;
  for (const Node& n : nodes_) {
    if (n.kind == Node::Kind::kVar) out.push_back(n.var);
  }
  return out;
}

ExprValue Expr::EvalNode(int index, const std::vector<ExprValue>& vars) const {
  const Node& n = nodes_[index];
  switch (n.kind) {
    case Node::Kind::kNumber:
      return ExprValue::Number(n.number);
    case Node::Kind::kString:
      return ExprValue::String(n.text);
    case Node::Kind::kVar:
      if (n.var < 0 || n.var >= static_cast<int>(vars.size())) return ExprValue::Number(kNaN);
      return vars[n.var];
    case Node::Kind::kUnary: {
      const ExprValue a = EvalNode(n.args[0], vars);
      if (a.is_string) return ExprValue::Number(kNaN);
      if (n.op == "-") return ExprValue::Number(-a.number);
      return ExprValue::Number(std::isnan(a.number) ? kNaN : (a.number == 0 ? 1 : 0));
    }
    case Node::Kind::kCall: {
      std::vector<double> args;
      for (int arg : n.args) {
        const ExprValue v = EvalNode(arg, vars);
        if (v.is_string) return ExprValue::Number(kNaN);
        args.push_back(v.number);
      }
      if (n.op == "abs") return ExprValue::Number(std::fabs(args[0]));
      if (n.op == "log2") return ExprValue::Number(args[0] > 0 ? std::log2(args[0]) : kNaN);
      if (n.op == "min") return ExprValue::Number(std::fmin(args[0], args[1]));
      return ExprValue::Number(std::fmax(args[0], args[1]));
    }
    case Node::Kind::kBinary:
      break;
  }
  const ExprValue a = EvalNode(n.args[0], vars);
  // Short-circuit logic, so `N_HEAD > 0 && N_EMBD % N_HEAD == 0` is safe.
  auto truth = [](const ExprValue& v) {
    return v.is_string ? !v.text.empty() : (std::isfinite(v.number) && v.number != 0);
  };
  if (n.op == "&&") {
    if (!truth(a)) return ExprValue::Number(0);
    return ExprValue::Number(truth(EvalNode(n.args[1], vars)) ? 1 : 0);
  }
  if (n.op == "||") {
    if (truth(a)) return ExprValue::Number(1);
    return ExprValue::Number(truth(EvalNode(n.args[1], vars)) ? 1 : 0);
  }
  const ExprValue b = EvalNode(n.args[1], vars);
  if (a.is_string || b.is_string) {
    if (!(a.is_string && b.is_string)) return ExprValue::Number(kNaN);
    if (n.op == "==") return ExprValue::Number(a.text == b.text ? 1 : 0);
    if (n.op == "!=") return ExprValue::Number(a.text != b.text ? 1 : 0);
    return ExprValue::Number(kNaN);
  }
  const double x = a.number, y = b.number;
  if (std::isnan(x) || std::isnan(y)) return ExprValue::Number(kNaN);
  if (n.op == "+") return ExprValue::Number(x + y);
  if (n.op == "-") return ExprValue::Number(x - y);
  if (n.op == "*") return ExprValue::Number(x * y);
  if (n.op == "/") return ExprValue::Number(y == 0 ? kNaN : x / y);
  if (n.op == "%") return ExprValue::Number(y == 0 ? kNaN : std::fmod(x, y));
  if (n.op == "==") return ExprValue::Number(x == y ? 1 : 0);
  if (n.op == "!=") return ExprValue::Number(x != y ? 1 : 0);
  if (n.op == "<") return ExprValue::Number(x < y ? 1 : 0);
  if (n.op == "<=") return ExprValue::Number(x <= y ? 1 : 0);
  if (n.op == ">") return ExprValue::Number(x > y ? 1 : 0);
  return ExprValue::Number(x >= y ? 1 : 0);
}

}  // namespace ratchet
