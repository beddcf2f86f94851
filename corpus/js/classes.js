// Classes, inheritance, getters and static members.
class Shape {
  constructor(name) {
    this.name = name;
  }
  area() {
    return 0;
  }
  describe() {
    const a = this.area();
    return this.name + ":" + a;
  }
}

class Rect extends Shape {
  constructor(w, h) {
    super("rect");
    this.w = w;
    this.h = h;
  }
  area() {
    return this.w * this.h;
  }
  get perimeter() {
    return 2 * (this.w + this.h);
  }
  static square(s) {
    return new Rect(s, s);
  }
}

const r = new Rect(3, 4);
const s = Rect.square(5);
const text = r.describe() + " " + s.describe();
const p = r.perimeter;
console.log(text, p);
