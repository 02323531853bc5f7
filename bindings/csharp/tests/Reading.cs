// What the tests add to the generated demo::Reading (demo.idl; generated classes are
// partial): a constructor, and equality so that samples compare by value.
using System;

namespace demo
{
    public partial class Reading : IEquatable<Reading>
    {
        public Reading() { }

        public Reading(int id, string text)
        {
            this.id = id;
            this.text = text;
        }

        public bool Equals(Reading other) { return other != null && id == other.id && text == other.text; }
        public override bool Equals(object obj) { return Equals(obj as Reading); }
        public override int GetHashCode() { return id; }
        public override string ToString() { return "Reading { " + id + ", \"" + text + "\" }"; }
    }
}
