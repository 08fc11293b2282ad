using System.Globalization;
using System.Text;
using System.Text.RegularExpressions;

namespace PriorityAsync.MessagePump.AzureServiceBus.Testing.Rules;

/// <summary>
/// A parsed SQL filter expression (the subset the broker speaks): comparisons <c>= &lt;&gt; != &lt; &gt; &lt;= &gt;=</c>,
/// <c>AND OR NOT</c>, <c>IN (…)</c>, <c>LIKE</c> with <c>%</c>, <c>_</c> and <c>ESCAPE</c>, <c>IS [NOT] NULL</c>, parentheses;
/// operands are system properties (<c>sys.Label</c> …), user properties (<c>name</c>, <c>user.name</c>, <c>[a name]</c>)
/// and literals (strings, numbers, TRUE, FALSE, NULL). A comparison with a missing property is unknown, and a message
/// matches only when the expression is true (SQL's three-valued logic).
/// </summary>
internal sealed class SqlFilter
{
    private readonly Node _root;

    private SqlFilter(string expression, Node root)
    {
        Expression = expression;
        _root = root;
    }

    public string Expression { get; }

    /// <summary>Parses an expression; throws <see cref="FormatException"/> saying what is not understood.</summary>
    public static SqlFilter Parse(string expression)
    {
        var parser = new Parser(Tokenize(expression));
        var root = parser.ParseExpression();
        parser.ExpectEnd();
        return new SqlFilter(expression, root);
    }

    public bool Matches(FilterMessage message) => _root.Evaluate(message) is true;

    private static List<Token> Tokenize(string text)
    {
        var tokens = new List<Token>();
        var i = 0;
        while (i < text.Length)
        {
            var c = text[i];
            if (char.IsWhiteSpace(c))
            {
                i++;
            }
            else if (c == '\'')
            {
                tokens.Add(new Token(TokenKind.String, ReadString(text, ref i)));
            }
            else if (c == '[')
            {
                var end = text.IndexOf(']', i);
                if (end < 0)
                {
                    throw new FormatException("A bracketed name is not closed.");
                }

                tokens.Add(new Token(TokenKind.Identifier, text[(i + 1)..end]));
                i = end + 1;
            }
            else if (char.IsDigit(c) || (c == '-' && i + 1 < text.Length && char.IsDigit(text[i + 1]) && !EndsOperand(tokens)))
            {
                var start = i++;
                while (i < text.Length && (char.IsDigit(text[i]) || text[i] == '.'))
                {
                    i++;
                }

                tokens.Add(new Token(TokenKind.Number, text[start..i]));
            }
            else if (char.IsLetter(c) || c == '_')
            {
                var start = i++;
                while (i < text.Length && (char.IsLetterOrDigit(text[i]) || text[i] == '_' || text[i] == '.'))
                {
                    i++;
                }

                tokens.Add(new Token(TokenKind.Identifier, text[start..i]));
            }
            else
            {
                tokens.Add(ReadSymbol(text, ref i));
            }
        }

        return tokens;
    }

    /// <summary>Reads an operator or punctuation; anything else is outside the subset.</summary>
    private static Token ReadSymbol(string text, ref int i)
    {
        var c = text[i];
        var two = i + 1 < text.Length ? text.Substring(i, 2) : null;
        if (two is "<>" or "!=" or "<=" or ">=")
        {
            i += 2;
            return new Token(TokenKind.Symbol, two);
        }

        if (c is '=' or '<' or '>' or '(' or ')' or ',')
        {
            i++;
            return new Token(TokenKind.Symbol, c.ToString());
        }

        throw new FormatException($"'{c}' at position {i} is not part of the SQL filter subset the test broker parses (arithmetic and functions are not).");
    }

    /// <summary>Reads a string literal starting at the quote at <paramref name="i"/> ('' is a quote); <paramref name="i"/> ends after it.</summary>
    private static string ReadString(string text, ref int i)
    {
        var value = new StringBuilder();
        i++;
        while (true)
        {
            if (i >= text.Length)
            {
                throw new FormatException("A string literal is not closed.");
            }

            if (text[i] == '\'')
            {
                if (i + 1 < text.Length && text[i + 1] == '\'')
                {
                    value.Append('\'');
                    i += 2;
                    continue;
                }

                i++;
                return value.ToString();
            }

            value.Append(text[i++]);
        }
    }

    private static bool EndsOperand(List<Token> tokens) =>
        tokens.Count > 0 && tokens[^1].Kind is TokenKind.Identifier or TokenKind.Number or TokenKind.String
        && !IsKeyword(tokens[^1], "AND", "OR", "NOT", "IN", "LIKE", "IS");

    private static bool IsKeyword(Token token, params string[] keywords) =>
        token.Kind == TokenKind.Identifier && Array.Exists(keywords, k => string.Equals(k, token.Text, StringComparison.OrdinalIgnoreCase));

    private enum TokenKind
    {
        Identifier,
        String,
        Number,
        Symbol,
    }

    private readonly record struct Token(TokenKind Kind, string Text);

    private sealed class Parser(List<Token> tokens)
    {
        private int _position;

        public Node ParseExpression()
        {
            var left = ParseAnd();
            while (TakeKeyword("OR"))
            {
                left = new Logical(left, ParseAnd(), isAnd: false);
            }

            return left;
        }

        public void ExpectEnd()
        {
            if (_position < tokens.Count)
            {
                throw new FormatException($"Unexpected '{tokens[_position].Text}' after a complete expression.");
            }
        }

        private Node ParseAnd()
        {
            var left = ParseNot();
            while (TakeKeyword("AND"))
            {
                left = new Logical(left, ParseNot(), isAnd: true);
            }

            return left;
        }

        private Node ParseNot() => TakeKeyword("NOT") ? new Not(ParseNot()) : ParsePredicate();

        private Node ParsePredicate()
        {
            if (TakeSymbol("("))
            {
                var inner = ParseExpression();
                Expect(")");
                return inner;
            }

            var left = ParseOperand();
            if (TakeKeyword("IS"))
            {
                var negated = TakeKeyword("NOT");
                if (!TakeKeyword("NULL"))
                {
                    throw new FormatException("IS must be followed by NULL or NOT NULL.");
                }

                return new IsNull(left, negated);
            }

            var not = TakeKeyword("NOT");
            if (TakeKeyword("IN"))
            {
                Expect("(");
                var items = new List<Operand> { ParseOperand() };
                while (TakeSymbol(","))
                {
                    items.Add(ParseOperand());
                }

                Expect(")");
                return Negate(new In(left, items), not);
            }

            if (TakeKeyword("LIKE"))
            {
                var pattern = ParseOperand() as Literal is { Value: string text } ? text : throw new FormatException("LIKE needs a string pattern.");
                char? escape = null;
                if (TakeKeyword("ESCAPE"))
                {
                    escape = ParseOperand() as Literal is { Value: string { Length: 1 } e } ? e[0] : throw new FormatException("ESCAPE needs a one-character string.");
                }

                return Negate(new Like(left, pattern, escape), not);
            }

            if (not)
            {
                throw new FormatException("NOT after an operand must be followed by IN or LIKE.");
            }

            if (_position < tokens.Count && tokens[_position] is { Kind: TokenKind.Symbol, Text: "=" or "<>" or "!=" or "<" or ">" or "<=" or ">=" } op)
            {
                _position++;
                return new Comparison(left, op.Text, ParseOperand());
            }

            throw new FormatException(_position < tokens.Count
                ? $"Expected a comparison after an operand, found '{tokens[_position].Text}'."
                : "Expected a comparison after an operand, found the end of the expression.");
        }

        private static Node Negate(Node node, bool not) => not ? new Not(node) : node;

        private Operand ParseOperand()
        {
            if (_position >= tokens.Count)
            {
                throw new FormatException("The expression ends where an operand is expected.");
            }

            var token = tokens[_position++];
            switch (token.Kind)
            {
                case TokenKind.String:
                    return new Literal(token.Text);
                case TokenKind.Number:
                    return new Literal(ParseNumber(token.Text));
                case TokenKind.Identifier when IsKeyword(token, "TRUE"):
                    return new Literal(true);
                case TokenKind.Identifier when IsKeyword(token, "FALSE"):
                    return new Literal(false);
                case TokenKind.Identifier when IsKeyword(token, "NULL"):
                    return new Literal(null);
                case TokenKind.Identifier when IsKeyword(token, "AND", "OR", "NOT", "IN", "LIKE", "IS", "ESCAPE"):
                    throw new FormatException($"'{token.Text}' is a keyword where an operand is expected.");
                case TokenKind.Identifier:
                    if (_position < tokens.Count && tokens[_position] is { Kind: TokenKind.Symbol, Text: "(" })
                    {
                        throw new FormatException($"Functions such as '{token.Text}(…)' are not part of the SQL filter subset the test broker parses.");
                    }

                    return PropertyOf(token.Text);
                default:
                    throw new FormatException($"'{token.Text}' is not an operand.");
            }
        }

        private static Property PropertyOf(string name)
        {
            if (name.StartsWith("sys.", StringComparison.OrdinalIgnoreCase))
            {
                var system = name[4..];
                return FilterMessage.IsSystemProperty(system)
                    ? new Property(system, isSystem: true)
                    : throw new FormatException($"'{name}' is not a system property the test broker knows.");
            }

            return new Property(name.StartsWith("user.", StringComparison.OrdinalIgnoreCase) ? name[5..] : name, isSystem: false);
        }

        private static object ParseNumber(string text) =>
            long.TryParse(text, NumberStyles.AllowLeadingSign, CultureInfo.InvariantCulture, out var integer) ? integer
            : decimal.TryParse(text, NumberStyles.AllowLeadingSign | NumberStyles.AllowDecimalPoint, CultureInfo.InvariantCulture, out var number) ? number
            : throw new FormatException($"'{text}' is not a number.");

        private bool TakeKeyword(string keyword)
        {
            if (_position < tokens.Count && IsKeyword(tokens[_position], keyword))
            {
                _position++;
                return true;
            }

            return false;
        }

        private bool TakeSymbol(string symbol)
        {
            if (_position < tokens.Count && tokens[_position] is { Kind: TokenKind.Symbol } token && string.Equals(token.Text, symbol, StringComparison.Ordinal))
            {
                _position++;
                return true;
            }

            return false;
        }

        private void Expect(string symbol)
        {
            if (!TakeSymbol(symbol))
            {
                throw new FormatException($"Expected '{symbol}'.");
            }
        }
    }

    /// <summary>A boolean node: true, false or null (unknown).</summary>
    private abstract class Node
    {
        public abstract bool? Evaluate(FilterMessage message);
    }

    private abstract class Operand
    {
        public abstract object? ValueOf(FilterMessage message);
    }

    private sealed class Literal(object? value) : Operand
    {
        public object? Value { get; } = value;

        public override object? ValueOf(FilterMessage message) => Value;
    }

    private sealed class Property(string name, bool isSystem) : Operand
    {
        public override object? ValueOf(FilterMessage message) => isSystem ? message.SystemProperty(name) : message.UserProperty(name);
    }

    private sealed class Logical(Node left, Node right, bool isAnd) : Node
    {
        public override bool? Evaluate(FilterMessage message)
        {
            var l = left.Evaluate(message);
            var r = right.Evaluate(message);
            return isAnd
                ? (l is false || r is false ? false : l is null || r is null ? null : true)
                : (l is true || r is true ? true : l is null || r is null ? null : false);
        }
    }

    private sealed class Not(Node inner) : Node
    {
        public override bool? Evaluate(FilterMessage message) => !inner.Evaluate(message);
    }

    private sealed class IsNull(Operand operand, bool negated) : Node
    {
        public override bool? Evaluate(FilterMessage message) => (operand.ValueOf(message) is null) != negated;
    }

    private sealed class In(Operand operand, List<Operand> items) : Node
    {
        public override bool? Evaluate(FilterMessage message)
        {
            var value = operand.ValueOf(message);
            if (value is null)
            {
                return null;
            }

            var unknown = false;
            foreach (var item in items)
            {
                switch (Values.Compare(value, item.ValueOf(message)))
                {
                    case 0:
                        return true;
                    case null:
                        unknown = true;
                        break;
                }
            }

            return unknown ? null : false;
        }
    }

    private sealed class Like(Operand operand, string pattern, char? escape) : Node
    {
        private readonly Regex _regex = new(ToRegex(pattern, escape), RegexOptions.Singleline | RegexOptions.CultureInvariant, TimeSpan.FromSeconds(1));

        public override bool? Evaluate(FilterMessage message) =>
            operand.ValueOf(message) is string text ? _regex.IsMatch(text) : null;

        private static string ToRegex(string pattern, char? escape)
        {
            var regex = new StringBuilder("^");
            for (var i = 0; i < pattern.Length; i++)
            {
                var c = pattern[i];
                if (c == escape && i + 1 < pattern.Length)
                {
                    regex.Append(Regex.Escape(pattern[++i].ToString()));
                }
                else
                {
                    regex.Append(c switch
                    {
                        '%' => ".*",
                        '_' => ".",
                        _ => Regex.Escape(c.ToString()),
                    });
                }
            }

            return regex.Append('$').ToString();
        }
    }

    private sealed class Comparison(Operand left, string op, Operand right) : Node
    {
        public override bool? Evaluate(FilterMessage message)
        {
            var l = left.ValueOf(message);
            var r = right.ValueOf(message);
            var order = Values.Compare(l, r);
            if (order is null)
            {
                return null;
            }

            if (op is "<" or ">" or "<=" or ">=" && (l is bool || r is bool))
            {
                return null;
            }

            return op switch
            {
                "=" => order == 0,
                "<>" or "!=" => order != 0,
                "<" => order < 0,
                ">" => order > 0,
                "<=" => order <= 0,
                _ => order >= 0,
            };
        }
    }

    /// <summary>Comparison of property values: numbers with numbers, strings with strings (ordinal), like types otherwise; null when unknown.</summary>
    private static class Values
    {
        public static int? Compare(object? left, object? right)
        {
            if (left is null || right is null)
            {
                return null;
            }

            if (IsNumber(left) && IsNumber(right))
            {
                if (left is double or float || right is double or float)
                {
                    return Convert.ToDouble(left, CultureInfo.InvariantCulture).CompareTo(Convert.ToDouble(right, CultureInfo.InvariantCulture));
                }

                return Convert.ToDecimal(left, CultureInfo.InvariantCulture).CompareTo(Convert.ToDecimal(right, CultureInfo.InvariantCulture));
            }

            if (left is string ls && right is string rs)
            {
                return Math.Sign(string.CompareOrdinal(ls, rs));
            }

            if (left.GetType() == right.GetType() && left is IComparable comparable)
            {
                return Math.Sign(comparable.CompareTo(right));
            }

            return null;
        }

        private static bool IsNumber(object value) =>
            value is sbyte or byte or short or ushort or int or uint or long or ulong or float or double or decimal;
    }
}
